"""The event stream's response on a real server: heartbeat comments while the run is quiet, a
follower that leaves frees its stream, and a stopping server ends the streams still open
(docs/decisions/0066-cpu-per-run-profile.md: the stream is sent by its request's own task)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.processes import free_port
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, parse_sse

HEARTBEAT = 0.2


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"sse_heartbeat_seconds": HEARTBEAT, "sse_max_streams_per_key": 1}


async def _talks_then_stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "thinking"
    await asyncio.sleep(60)  # the run stays running for the whole test
    yield " never"


@asynccontextmanager
async def _served(app: FastAPI) -> AsyncIterator[tuple[uvicorn.Server, httpx.AsyncClient]]:
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


async def _stalled_run(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, models: ModelRegistry
) -> str:
    models.register("test:stalls", FunctionModel(stream_function=_talks_then_stalls))
    agent_id = await make_agent(model="test:stalls")
    run = await create_run(client, auth, "take forever", agent_id=agent_id)
    run_id: str = run["run_id"]
    return run_id


async def test_a_quiet_stream_carries_heartbeats_between_its_events(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    run_id = await _stalled_run(client, auth, make_agent, models)
    text = ""
    async with (
        _served(app) as (_, live),
        live.stream("GET", f"{RUNS}/{run_id}/events", headers=auth) as response,
    ):
        assert response.status_code == 200
        async with asyncio.timeout(10):
            async for chunk in response.aiter_text():
                text += chunk
                if text.count(": ping") >= 3 and "message.delta" in text:
                    break
    kinds = [frame["event"] for frame in parse_sse(text)]
    assert kinds[:2] == ["run.queued", "run.started"] and "message.delta" in kinds, kinds
    assert text.count(": ping") >= 3


async def test_a_follower_that_leaves_frees_its_stream(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    run_id = await _stalled_run(client, auth, make_agent, models)
    events = f"{RUNS}/{run_id}/events"
    async with _served(app) as (_, live):
        for _ in range(3):  # one stream a key: each must be given back when its client leaves
            async with asyncio.timeout(10):
                while True:
                    async with live.stream("GET", events, headers=auth) as response:
                        if response.status_code == 429:  # the last one not yet noticed gone
                            await asyncio.sleep(0.05)
                            continue
                        assert response.status_code == 200
                        async for chunk in response.aiter_text():
                            if "message.delta" in chunk:
                                break
                        break


async def test_a_stopping_server_ends_the_streams_still_open(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    run_id = await _stalled_run(client, auth, make_agent, models)
    loop = asyncio.get_running_loop()
    async with (
        _served(app) as (server, live),
        live.stream("GET", f"{RUNS}/{run_id}/events", headers=auth) as response,
    ):
        assert response.status_code == 200
        chunks = response.aiter_text()
        async with asyncio.timeout(10):
            async for chunk in chunks:
                if "message.delta" in chunk:
                    break
        server.should_exit = True
        stopping = loop.time()
        # The stream ends (cut: the response is not completed, as the run is not); the run goes
        # on.
        with contextlib.suppress(httpx.RemoteProtocolError):
            async with asyncio.timeout(10):
                async for chunk in chunks:
                    assert "run.completed" not in chunk
        assert loop.time() - stopping < 10
