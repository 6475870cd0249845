"""`atrium worker`: a process that only executes runs, until SIGINT or SIGTERM."""

from __future__ import annotations

import asyncio
import signal

from atrium.db.engine import Database
from atrium.db.redis_client import connect_redis
from atrium.memory.embedders import close_process_embedder
from atrium.runs.events.broker import Broker, RedisBroker
from atrium.settings import Settings
from atrium.worker.pool import WorkerPool


async def run_worker_process(settings: Settings) -> None:
    """Run a worker pool with its own broker (Redis when configured) until told to stop."""
    db = Database(settings)
    redis = (
        connect_redis(settings.redis_url, settings.redis_max_connections)
        if settings.redis_url
        else None
    )
    # No stream is served here: wake-ups and cancel requests only, not every run's events.
    broker = (
        RedisBroker(redis, prefix=settings.redis_prefix, events=False)
        if redis is not None
        else Broker()
    )
    pool = WorkerPool(settings=settings, db=db, broker=broker)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await broker.start()
    await pool.start()
    try:
        await stop.wait()
    finally:
        await pool.stop()
        await close_process_embedder(settings)
        await broker.stop()
        await db.dispose()
        if redis is not None:
            await redis.aclose()
