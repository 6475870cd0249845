"""Scale-out: an API process without workers and a worker process, joined by Redis.

Both polls are set far beyond the test's patience, so the wake-up and every live event can only
have travelled through Redis pub/sub.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from atrium.app import create_app
from atrium.settings import Settings
from tests.runs.helpers import create_run, read_stream


@pytest.fixture
def settings_overrides(redis_url: str) -> dict[str, object]:
    return {
        "redis_url": redis_url,
        "run_worker": False,
        "sse_poll_seconds": 60.0,
        "run_poll_seconds": 60.0,
    }


@pytest.fixture
async def worker_app(settings: Settings) -> AsyncIterator[FastAPI]:
    """A second process's worth of atrium: same database and Redis, workers on."""
    application = create_app(settings.model_copy(update={"run_worker": True}))
    async with LifespanManager(application):
        yield application


async def test_events_and_wakeups_cross_processes_through_redis(
    client: httpx.AsyncClient, auth: dict[str, str], worker_app: FastAPI
) -> None:
    assert worker_app.state.workers is not None
    run = await create_run(client, auth, "across processes")
    stream = asyncio.create_task(read_stream(client, auth, run["run_id"]))
    frames = await asyncio.wait_for(stream, 10)
    kinds = [frame["event"] for frame in frames]
    assert kinds[0] == "run.queued" and kinds[-1] == "run.completed"
    assert [frame["id"] for frame in frames] == list(range(1, len(frames) + 1))
    assert "message.delta" in kinds and "artifact.created" in kinds
