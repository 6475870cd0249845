"""A run that can only answer makes its one model request outside the agent graph
(`runtime/answer.py`): what a client sees, and what the model is sent, must be what the agent
graph gives.

Each case makes the same run twice through the API, with the worker's runtime answering such
runs with a single request and with it sending every run through the graph
(`Runtime.single_requests`), and compares the finished runs (status, result, error, billing),
their events (kinds and payloads, but for ids and clocks) and the messages the model got,
including those of a later run of the same thread (what the first run stored).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.runtime.executor import Runtime
from atrium.runtime.llm_models import ModelRegistry
from tests.processes import free_port
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer

# What differs between any two runs: ids and clocks (pydantic-ai's run and tool call ids, the
# model id an agent run stamps on a response).
_STAMPS = {
    "timestamp",
    "run_id",
    "conversation_id",
    "model_id",
    "tool_call_id",
    "thread_id",
    "agent_id",
    "created_at",
    "started_at",
    "finished_at",
    "status_url",
    "events_url",
    "artifacts_url",
}

Stream = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | DeltaToolCalls]]


@dataclass
class Seen:
    run: dict[str, Any]
    events: list[Any]
    sent: list[Any]  # the messages of each model request, as JSON


def _text_joined(events: list[Any]) -> list[Any]:
    """The events with each series of `message.delta` joined into one: how a stream's text is
    cut into deltas depends on timing (the recorder coalesces what arrives within a window),
    not on the way the run was made. Their `seq` then differs too, and is dropped."""
    joined: list[Any] = []
    for kind, event in events:
        data = {key: value for key, value in event.items() if key != "seq"}
        if kind == "message.delta" and joined and joined[-1][0] == "message.delta":
            joined[-1] = [kind, {**data, "text": joined[-1][1]["text"] + data["text"]}]
        else:
            joined.append([kind, data])
    return joined


def _without_stamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_stamps(v) for k, v in value.items() if k not in _STAMPS}
    if isinstance(value, list):
        return [_without_stamps(v) for v in value]
    return value


@contextmanager
def _single_requests(app: FastAPI, on: bool) -> Iterator[None]:
    runtime: Runtime = app.state.workers.runtime
    runtime.single_requests = on
    try:
        yield
    finally:
        runtime.single_requests = True


async def _events(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> list[Any]:
    headers = {**auth, "Accept": "application/json"}
    response = await client.get(f"{RUNS}/{run_id}/events", headers=headers)
    return [[event["event"], event["data"]] for event in response.json()["data"]]


async def _wait_text(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> None:
    for _ in range(1000):
        if any(kind == "message.delta" for kind, _ in await _events(client, auth, run_id)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no message.delta event")


@pytest.fixture
def run_both(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> Callable[..., Any]:
    async def both(
        stream: Stream, *, config: dict[str, Any] | None = None, cancel: bool = False
    ) -> list[Seen]:
        seen: list[Seen] = []
        for on in (True, False):
            sent: list[Any] = []

            async def recording(
                messages: list[ModelMessage], info: AgentInfo, sent: list[Any] = sent
            ) -> AsyncIterator[Any]:
                sent.append(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))
                async for item in stream(messages, info):
                    yield item

            name = "test:single"  # registered again: each way has its own recorder
            models.register(name, FunctionModel(stream_function=recording))
            agent_id = await make_agent(model=name, tools=[], **(config or {}))
            with _single_requests(app, on):
                run = await create_run(client, auth, "hello there", agent_id=agent_id)
                if cancel:
                    await _wait_text(client, auth, run["run_id"])
                    await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
                done = await wait_finished(client, auth, run["run_id"])
                events = await _events(client, auth, run["run_id"])
                if done["status"] == "completed":  # what the thread's next run is sent
                    later = await create_run(
                        client, auth, "and then?", agent_id=agent_id, thread_id=done["thread_id"]
                    )
                    await wait_finished(client, auth, later["run_id"])
            seen.append(Seen(done, events, sent))
        single, graph = seen
        assert _without_stamps(single.run) == _without_stamps(graph.run)
        assert _without_stamps(_text_joined(single.events)) == _without_stamps(
            _text_joined(graph.events)
        )
        assert _without_stamps(single.sent) == _without_stamps(graph.sent)
        return seen

    return both


async def _words(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    for word in ("a ", "plain ", "answer"):
        yield word


async def test_a_plain_answer(run_both: Callable[..., Any]) -> None:
    config = {"instructions": "Answer briefly.", "temperature": 0.2, "max_output_tokens": 64}
    single, _ = await run_both(_words, config=config)
    assert single.run["status"] == "completed"
    assert single.run["result"] == "a plain answer"
    assert single.run["billing"]["requests"] == 1
    steps = [data for kind, data in single.events if kind == "run.step"]
    assert [(step["step"], step["index"]) for step in steps] == [("model_request", 1)]
    assert len(single.sent) == 2  # the run, then the thread's next one, with the history


async def test_an_empty_answer_is_retried(run_both: Callable[..., Any]) -> None:
    async def empty_first(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if len(messages) == 1:
            yield ""
            return
        async for word in _words(messages, info):
            yield word

    single, _ = await run_both(empty_first)
    assert single.run["status"] == "completed"
    assert single.run["billing"]["requests"] == 2
    assert len(single.sent) == 3  # the first answer was not asked for twice


async def test_a_call_of_a_tool_the_run_does_not_have(run_both: Callable[..., Any]) -> None:
    async def calls_first(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="nonexistent", json_args="{}")}
            return
        async for word in _words(messages, info):
            yield word

    single, _ = await run_both(calls_first)
    assert single.run["status"] == "completed", single.run
    assert single.run["billing"]["requests"] == 2


async def test_a_provider_error(run_both: Callable[..., Any]) -> None:
    async def refused(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
        raise ModelHTTPError(status_code=429, model_name="case", body={"message": "slow down"})
        yield ""  # pragma: no cover - an async generator

    single, _ = await run_both(refused)
    assert single.run["error"]["code"] == "MODEL_ERROR"


async def _slow(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "working "
    await asyncio.sleep(30)
    yield "never"


async def test_a_cancellation_during_the_answer(run_both: Callable[..., Any]) -> None:
    single, _ = await run_both(_slow, cancel=True)
    assert single.run["status"] == "cancelled"
    assert [data["text"] for kind, data in single.events if kind == "message.delta"] == ["working "]


@pytest.mark.parametrize(
    "settings_overrides",
    [{"run_total_tokens_limit": 5}, {"run_timeout_seconds": 0.5}],
    ids=["token-limit", "timeout"],
)
async def test_a_limit(run_both: Callable[..., Any], settings_overrides: dict[str, Any]) -> None:
    single, _ = await run_both(_slow if "run_timeout_seconds" in settings_overrides else _words)
    expected = "RUN_TIMEOUT" if "run_timeout_seconds" in settings_overrides else "USAGE_LIMIT"
    assert single.run["error"]["code"].startswith(expected)


@pytest.fixture(scope="module")
def model_port() -> int:
    """The port of the OpenAI-compatible server one test starts: in the settings of the
    module's apps, which are built before it starts."""
    return free_port()


@pytest.fixture
def settings_overrides(model_port: int) -> dict[str, object]:
    return {"llm_base_url": f"http://127.0.0.1:{model_port}/v1"}


async def test_an_openai_compatible_server_gets_the_same_request(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    model_port: int,
) -> None:
    """Over the wire: the body the graph's model request sends."""
    config = {"instructions": "Answer briefly.", "temperature": 0.7, "max_output_tokens": 128}
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=[], **config)
    runs = []
    async with ChatServer(port=model_port) as model_server:
        for on in (True, False):
            with _single_requests(app, on):
                run = await create_run(client, auth, "hello", agent_id=agent_id)
                runs.append(await wait_finished(client, auth, run["run_id"]))
    single, graph = runs
    assert single["status"] == "completed", single.get("error")
    assert single["result"].strip() == ANSWER
    assert _without_stamps(single) == _without_stamps(graph)
    first, second = model_server.requests
    assert first == second
    assert first["messages"][0] == {"role": "system", "content": "Answer briefly."}
