"""An open event stream re-checks its key: once the key is revoked, the
stream ends with an `error` event carrying the one error body (`UNAUTHORIZED`) within
`ATRIUM_SSE_AUTH_RECHECK_SECONDS`, even while the run stays quiet."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic_ai.models.function import FunctionModel

from atrium.auth.service import IssuedKey, revoke_key
from atrium.db.engine import Database
from atrium.runtime.llm_models import ModelRegistry
from tests.reliability.test_bounds import served
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, talks_then_stalls

RECHECK = 0.3
# Time the server may take beyond the re-check interval: the point read, the frame's trip, a
# loaded machine.
SLACK = 2.0


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    # A quiet stream would otherwise wait for its next poll: 1 s doubling up to 16 s.
    return {"sse_auth_recheck_seconds": RECHECK, "sse_heartbeat_seconds": 0.2}


async def _frames(response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
    """SSE frames as `{"event", "data", "id"?}`; heartbeat comments skipped."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk.replace("\r\n", "\n")
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            frame: dict[str, Any] = {}
            for line in block.split("\n"):
                if line and not line.startswith(":"):
                    name, _, value = line.partition(":")
                    frame[name] = value.removeprefix(" ")
            if "data" in frame:
                frame["data"] = json.loads(frame["data"])
                yield frame


async def _revoke(db: Database, key_id: int) -> None:
    async with db.transaction() as session:
        await revoke_key(session, key_id=key_id)


async def test_a_revoked_key_ends_its_open_stream_with_an_error_event(
    app: FastAPI,
    client: httpx.AsyncClient,
    db: Database,
    api_key: IssuedKey,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:stalls", FunctionModel(stream_function=talks_then_stalls))
    agent_id = await make_agent(model="test:stalls")
    run = await create_run(client, auth, "take forever", agent_id=agent_id)
    async with (
        served(app) as live,
        live.stream("GET", f"{RUNS}/{run['run_id']}/events", headers=auth) as response,
    ):
        assert response.status_code == 200
        frames = _frames(response)
        async for frame in frames:
            if frame["event"] == "message.delta":
                break  # the run is running, and stays so
        loop = asyncio.get_running_loop()
        await _revoke(db, api_key.key_id)
        revoked_at = loop.time()
        after = [frame async for frame in _with_deadline(frames, RECHECK + SLACK)]
        ended_after = loop.time() - revoked_at

    assert [frame["event"] for frame in after] == ["error"], after
    assert "id" not in after[0], "the error is not an event of the run"
    error = after[0]["data"]["error"]
    assert error["code"] == "UNAUTHORIZED" and set(error) == {"code", "message", "details"}
    assert ended_after <= RECHECK + SLACK
    status = (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).status_code
    assert status == 401, "the key is revoked for every request, not only the stream"


async def test_a_valid_key_keeps_its_stream_past_many_rechecks(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:stalls", FunctionModel(stream_function=talks_then_stalls))
    agent_id = await make_agent(model="test:stalls")
    run = await create_run(client, auth, "take forever", agent_id=agent_id)
    async with (
        served(app) as live,
        live.stream("GET", f"{RUNS}/{run['run_id']}/events", headers=auth) as response,
    ):
        seen = [frame async for frame in _with_deadline(_frames(response), RECHECK * 6)]
    kinds = [frame["event"] for frame in seen]
    assert "message.delta" in kinds and "error" not in kinds


async def _with_deadline(
    frames: AsyncIterator[dict[str, Any]], seconds: float
) -> AsyncIterator[dict[str, Any]]:
    """The frames that arrive within `seconds`, then stop (the stream may go on)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                frame = await anext(frames)
        except (TimeoutError, StopAsyncIteration):
            return
        yield frame
