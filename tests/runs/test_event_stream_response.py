"""The event stream's response on a real server: heartbeat comments while the run is quiet, a
follower that leaves frees its stream, and a stopping server ends the streams still open."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest
from fastapi import FastAPI
from pydantic_ai.models.function import FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.reliability.test_bounds import serving
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, parse_sse, talks_then_stalls

HEARTBEAT = 0.2


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"sse_heartbeat_seconds": HEARTBEAT, "sse_max_streams_per_key": 1}


async def _stalled_run(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, models: ModelRegistry
) -> str:
    models.register("test:stalls", FunctionModel(stream_function=talks_then_stalls))
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
        serving(app) as (_, live),
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
    async with serving(app) as (_, live):
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
        serving(app) as (server, live),
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
