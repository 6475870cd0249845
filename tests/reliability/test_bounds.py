"""Bounds, each configurable and each answered with its documented error: request body size,
prompt size, artifact size and count per run, event streams per key, per-run timeout."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.processes import free_port
from tests.reliability.conftest import assert_error
from tests.runs.helpers import RUNS, create_run, wait_finished

BODY_LIMIT = 2048
PROMPT_LIMIT = 100
ARTIFACT_BYTES = 100
ARTIFACTS_PER_RUN = 2
STREAMS_PER_KEY = 2


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {
        "max_body_bytes": BODY_LIMIT,
        "run_max_prompt_chars": PROMPT_LIMIT,
        "artifact_max_bytes": ARTIFACT_BYTES,
        "artifact_max_per_run": ARTIFACTS_PER_RUN,
        "sse_max_streams_per_key": STREAMS_PER_KEY,
        "sse_heartbeat_seconds": 0.2,
    }


# Only the timeout's own test runs under a short timeout: with it module-wide, the artifact
# tests' three model steps (each writing artifacts) took longer than 0.5 s on a loaded machine
# and their runs failed with RUN_TIMEOUT instead of completing.
SHORT_TIMEOUT = {"run_timeout_seconds": 0.5}


@pytest.fixture
def models(app: FastAPI) -> ModelRegistry:
    registry: ModelRegistry = app.state.workers.runtime.models
    return registry


async def _agent(client: httpx.AsyncClient, auth: dict[str, str], model: str) -> str:
    config = {"model": model, "tools": ["write_artifact"]}
    response = await client.post(
        "/v1/agents", json={"name": "bounded", "config": config}, headers=auth
    )
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/v1/agents", "application/json"),
        (RUNS, "application/json"),
        ("/api/v1/domains", "application/x-www-form-urlencoded"),
        ("/api/v1/spaces", "application/json"),
    ],
)
async def test_request_body_over_the_limit_is_413_in_every_group(
    client: httpx.AsyncClient, auth: dict[str, str], path: str, content_type: str
) -> None:
    headers = {**auth, "Content-Type": content_type}
    over = b"x" * (BODY_LIMIT + 1)
    error = assert_error(await client.post(path, content=over, headers=headers), 413)
    assert error["code"] == "PAYLOAD_TOO_LARGE" and error["details"]["limit"] == BODY_LIMIT

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted while read
        for _ in range(BODY_LIMIT // 512 + 2):
            yield b"x" * 512

    error = assert_error(await client.post(path, content=chunked(), headers=headers), 413)
    assert error["code"] == "PAYLOAD_TOO_LARGE"
    # At the limit the body reaches the endpoint, which judges its content (400, not 413).
    at_limit = await client.post(path, content=b"x" * BODY_LIMIT, headers=headers)
    assert at_limit.status_code == 400, at_limit.text


async def test_prompt_over_the_limit_is_400_on_prompt(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    too_long = await client.post(RUNS, json={"prompt": "p" * (PROMPT_LIMIT + 1)}, headers=auth)
    error = assert_error(too_long, 400)
    assert error["details"]["parameter"] == "prompt"
    assert str(PROMPT_LIMIT) in error["message"]
    await create_run(client, auth, "p" * PROMPT_LIMIT)  # exactly at the limit is accepted


def _scripted(steps: list[list[dict[str, str]]], seen: list[str]) -> FunctionModel:
    """A model that writes the artifacts of step n on its n-th request, then answers."""

    async def stream(messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[Any]:
        for message in messages:
            if isinstance(message, ModelRequest):
                seen.extend(
                    str(part.content)
                    for part in message.parts
                    if isinstance(part, RetryPromptPart | ToolReturnPart)
                )
        step = sum(isinstance(message, ModelResponse) for message in messages)
        if step >= len(steps):
            yield "done"
            return
        calls: DeltaToolCalls = {
            index: DeltaToolCall(name="write_artifact", json_args=json.dumps(arguments))
            for index, arguments in enumerate(steps[step])
        }
        yield calls

    return FunctionModel(stream_function=stream)


async def test_artifact_count_per_run_is_capped(
    client: httpx.AsyncClient, auth: dict[str, str], models: ModelRegistry
) -> None:
    seen: list[str] = []
    steps = [
        [{"name": "a.txt", "content": "a"}, {"name": "b.txt", "content": "b"}],
        [{"name": "c.txt", "content": "c"}],
    ]
    models.register("test:many-files", _scripted(steps, seen))
    agent_id = await _agent(client, auth, "test:many-files")
    done = await wait_finished(
        client, auth, (await create_run(client, auth, agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done["error"]
    assert sorted(a["name"] for a in done["artifacts"]) == ["a.txt", "b.txt"]
    assert any(f"at most {ARTIFACTS_PER_RUN} artifacts" in text for text in seen), seen


async def test_artifact_size_is_capped(
    client: httpx.AsyncClient, auth: dict[str, str], models: ModelRegistry
) -> None:
    seen: list[str] = []
    steps = [[{"name": "big.txt", "content": "x" * (ARTIFACT_BYTES + 1)}]]
    models.register("test:big-file", _scripted(steps, seen))
    agent_id = await _agent(client, auth, "test:big-file")
    done = await wait_finished(
        client, auth, (await create_run(client, auth, agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done["error"]
    assert done["artifacts"] == []
    assert any(f"larger than {ARTIFACT_BYTES} bytes" in text for text in seen), seen


async def _slow(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "working"
    await asyncio.sleep(30)


@pytest.mark.parametrize("settings_overrides", [SHORT_TIMEOUT], ids=["short-timeout"])
async def test_a_run_past_its_timeout_fails_with_run_timeout(
    client: httpx.AsyncClient, auth: dict[str, str], models: ModelRegistry
) -> None:
    models.register("test:slow", FunctionModel(stream_function=_slow))
    agent_id = await _agent(client, auth, "test:slow")
    run = await create_run(client, auth, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"], within=30)
    assert done["status"] == "failed"
    assert done["error"]["code"] == "RUN_TIMEOUT"


@pytest.mark.parametrize(
    "settings_overrides", [{"sse_max_streams_per_key": STREAMS_PER_KEY}], ids=["streams"]
)
async def test_event_streams_per_key_are_capped(
    app: FastAPI, auth: dict[str, str], models: ModelRegistry
) -> None:
    models.register("test:slow", FunctionModel(stream_function=_slow))
    async with served(app) as client:
        await _streams_are_capped(client, auth)


@asynccontextmanager
async def served(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app on a loopback port (streams need a real server: ASGITransport buffers them)."""
    async with serving(app) as (_server, client):
        yield client


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[tuple[uvicorn.Server, httpx.AsyncClient]]:
    """`served`, with the server too (a test that stops it)."""
    port = free_port()
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", ws="none"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
        await asyncio.sleep(0.01)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            yield server, client
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 20)


async def _streams_are_capped(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await _agent(client, auth, "test:slow")
    run = await create_run(client, auth, agent_id=agent_id)
    events = f"{RUNS}/{run['run_id']}/events"

    async def hold(opened: asyncio.Event, release: asyncio.Event) -> None:
        async with client.stream("GET", events, headers=auth) as response:
            assert response.status_code == 200
            opened.set()
            await release.wait()

    release = asyncio.Event()
    opened = [asyncio.Event() for _ in range(STREAMS_PER_KEY)]
    holders = [asyncio.create_task(hold(flag, release)) for flag in opened]
    try:
        await asyncio.wait_for(asyncio.gather(*(flag.wait() for flag in opened)), 30)
        refused = await client.get(events, headers=auth)
        error = assert_error(refused, 429)
        assert error["details"]["limit"] == STREAMS_PER_KEY
        assert refused.headers["retry-after"] == "1"
        # The JSON form of the events holds no stream, so it is still served.
        as_json = await client.get(events, headers={**auth, "Accept": "application/json"})
        assert as_json.status_code == 200
    finally:
        release.set()
        await asyncio.gather(*holders, return_exceptions=True)
    # A closed stream frees its slot.
    for _ in range(100):
        again = asyncio.Event()
        try:
            await asyncio.wait_for(hold(again, release), 10)
            break
        except AssertionError:  # the server has not noticed the closed streams yet
            await asyncio.sleep(0.05)
    assert again.is_set()
