"""Scale-out: an API process without workers and a worker process, joined by Redis.

Both polls are set far beyond the test's patience, so the wake-up and every live event can only
have travelled through Redis pub/sub.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from redis.asyncio import Redis

from atrium.app import create_app
from atrium.db.redis_client import connect_redis
from atrium.runs.events.broker import RedisBroker
from atrium.settings import Settings
from atrium.worker.process import run_worker_process
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


async def test_a_worker_process_hears_wakeups_and_serves_events_without_receiving_them(
    client: httpx.AsyncClient, auth: dict[str, str], settings: Settings, redis_url: str
) -> None:
    """`atrium worker` subscribes to the control channel only: every subscriber of the events
    channel decodes every event of every run, which made each added worker raise the CPU of
    all runs (issue 43). The API process (no workers) subscribes to the events channel only."""
    redis = Redis.from_url(redis_url)
    events, control = f"{settings.redis_prefix}:runs", f"{settings.redis_prefix}:control"
    worker = asyncio.create_task(
        run_worker_process(settings.model_copy(update={"run_worker": True}))
    )
    try:
        while dict(await redis.pubsub_numsub(control)).get(control.encode(), 0) < 1:
            assert not worker.done()
            await asyncio.sleep(0.05)
        run = await create_run(client, auth, "through a worker process")
        frames = await asyncio.wait_for(read_stream(client, auth, run["run_id"]), 10)
        assert [frame["event"] for frame in frames][-1] == "run.completed"
        subscribers = dict(await redis.pubsub_numsub(events, control))
        assert subscribers == {events.encode(): 1, control.encode(): 1}
    finally:
        worker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await worker
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await redis.aclose()


async def test_a_wakeup_wakes_one_worker_process_with_room(
    settings: Settings, redis_url: str
) -> None:
    """A queued run wakes one worker process, not all of them (each woken worker tries a claim,
    and all but one find nothing: decision 0063); a process without room leaves it to others."""
    redis = Redis.from_url(redis_url)
    prefix = f"{settings.redis_prefix}-wake"
    await redis.delete(f"{prefix}:wake")
    api = RedisBroker(redis, prefix=prefix, control=False)
    workers = [RedisBroker(redis, prefix=prefix, events=False) for _ in range(3)]
    woken = [0, 0, 0]
    room = [True, True, False]
    for index, broker in enumerate(workers):

        def listener(index: int = index) -> None:
            woken[index] += 1

        def ready(index: int = index) -> bool:
            return room[index]

        broker.on_wake(listener, ready=ready)
    try:
        for broker in (api, *workers):
            await broker.start()
        for _ in range(6):
            api.wake_workers()
        await asyncio.sleep(1.0)  # every token popped, and a second delivery would show
        assert sum(woken) == 6 and woken[2] == 0
        assert await redis.llen(f"{prefix}:wake") == 0
    finally:
        for broker in (api, *workers):
            await broker.stop()
        await redis.delete(f"{prefix}:wake")
        await redis.aclose()


@pytest.mark.parametrize("read_timeout", [None, 1.0])
async def test_an_idle_worker_process_waits_for_wakeups_without_errors(
    settings: Settings, redis_url: str, read_timeout: float | None, caplog: pytest.LogCaptureFixture
) -> None:
    """A worker's pop of the wake-up list ends on the server before the client's read
    timeout (redis-py's 5 s default, or the URL's `socket_timeout`): an idle process logs no
    failure and still takes the next wake-up at once."""
    url = redis_url if read_timeout is None else f"{redis_url}?socket_timeout={read_timeout:g}"
    redis = connect_redis(url, max_connections=4)
    prefix = f"{settings.redis_prefix}-idle-{read_timeout}"
    await redis.delete(f"{prefix}:wake")
    api = RedisBroker(redis, prefix=prefix, control=False)
    worker = RedisBroker(redis, prefix=prefix, events=False)
    woken = asyncio.Event()
    worker.on_wake(woken.set, ready=lambda: True)
    try:
        await api.start()
        await worker.start()
        with caplog.at_level(logging.WARNING, logger="atrium.runs.events.broker"):
            await asyncio.sleep((read_timeout or 5.0) * 1.3)  # past one client read timeout
            api.wake_workers()
            await asyncio.wait_for(woken.wait(), 0.5)
        assert not [r.getMessage() for r in caplog.records], "an idle pop failed"
    finally:
        await api.stop()
        await worker.stop()
        await redis.delete(f"{prefix}:wake")
        await redis.aclose()
