"""Limits and failures end a run with a clear error, never leave it stuck."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel

from atrium.app import create_app
from atrium.runtime.llm_models import ModelRegistry
from atrium.settings import Settings
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, read_stream, wait_finished


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return BASE


BASE: dict[str, object] = {
    "run_request_limit": 3,
    "credit_prices": {"test:plain": {"input": 1000.0, "output": 2000.0}},
}
# Only the timeout's own test runs under a short timeout: with it module-wide, the looping
# agent's three requests and tool calls took longer than 0.5 s on a loaded machine and its run
# failed with RUN_TIMEOUT instead of USAGE_LIMIT_EXCEEDED.
SHORT_TIMEOUT = {**BASE, "run_timeout_seconds": 0.5}


async def _slow(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "working"
    await asyncio.sleep(30)


async def _calls_a_tool_forever(
    _messages: list[ModelMessage], _info: AgentInfo
) -> AsyncIterator[DeltaToolCalls]:
    yield {0: DeltaToolCall(name="list_artifacts", json_args="{}")}


async def _rate_limited(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    raise ModelHTTPError(status_code=429, model_name="limited", body={"message": "slow down"})


async def _rate_limited_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    await _rate_limited(messages, info)
    yield ""  # pragma: no cover - never reached


@pytest.mark.parametrize("settings_overrides", [SHORT_TIMEOUT], ids=["short-timeout"])
async def test_a_run_past_its_timeout_fails(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:slow", FunctionModel(stream_function=_slow))
    run = await create_run(client, auth, agent_id=await make_agent(model="test:slow"))
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed"
    assert done["error"]["code"] == "RUN_TIMEOUT"
    usage = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (usage["runs"], usage["failed"]) == (1, 1)


async def test_the_request_cap_fails_a_looping_agent(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:loops", FunctionModel(stream_function=_calls_a_tool_forever))
    agent_id = await make_agent(model="test:loops", tools=["list_artifacts"])
    run = await create_run(client, auth, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed"
    assert done["error"]["code"] == "USAGE_LIMIT_EXCEEDED"
    assert done["billing"]["requests"] == 3
    assert done["billing"]["tool_calls"] == 3


async def test_a_provider_http_error_fails_with_model_error(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register(
        "test:limited", FunctionModel(_rate_limited, stream_function=_rate_limited_stream)
    )
    run = await create_run(client, auth, agent_id=await make_agent(model="test:limited"))
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed"
    assert done["error"]["code"] == "MODEL_ERROR"
    assert "429" in done["error"]["message"]
    frames = await read_stream(client, auth, run["run_id"])
    assert frames[-1]["event"] == "run.failed"


@pytest.mark.parametrize(
    "settings_overrides",
    # The app that creates the agent has the server's address and no worker; the one that
    # runs it has lost the address since (a setting removed between two starts).
    [{"llm_base_url": "http://127.0.0.1:9/v1", "run_worker": False}],
)
async def test_a_stored_model_that_lost_its_settings_fails_with_model_unavailable(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, settings: Settings
) -> None:
    agent_id = await make_agent(model="openai-compatible:llama3")
    restarted = create_app(settings.model_copy(update={"llm_base_url": None, "run_worker": True}))
    async with LifespanManager(restarted):
        transport = httpx.ASGITransport(app=restarted)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as later:
            run = await create_run(later, auth, agent_id=agent_id)
            done = await wait_finished(later, auth, run["run_id"])
    assert done["status"] == "failed"
    assert done["error"] == {
        "code": "MODEL_UNAVAILABLE",
        "message": "openai-compatible:llama3: openai-compatible models need ATRIUM_LLM_BASE_URL, "
        "the address of the server (e.g. http://127.0.0.1:11434/v1 for Ollama)",
    }


async def test_credits_follow_the_price_table(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:plain", TestModel(custom_output_text="plain answer"))
    run = await create_run(client, auth, agent_id=await make_agent(model="test:plain", tools=[]))
    done = await wait_finished(client, auth, run["run_id"])
    assert done["result"] == "plain answer"
    billing = done["billing"]
    expected = (billing["input_tokens"] * 1000 + billing["output_tokens"] * 2000) / 1_000_000
    assert billing["credits"] == pytest.approx(expected)
    assert billing["credits"] > 0
