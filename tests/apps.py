"""Running apps of the tests, reused by the next test that asks for the same settings.

Starting an app costs more CPU than most tests: engines and their first connections, the
worker pool and webhook sender, and FastAPI's per-route state, built on each route's first
request. So an app stays running after its test, at most one per database (a second app's
worker would claim the next test's runs), and serves the next test whose settings are the same
while it is idle: no run executing, no webhook being sent. Anything else stops it.

Each test still starts from empty tables (`empty_tables`), so data never leaks between tests.
What a test may change inside a reused app is put back on release (the models registered on
its worker); a test that changes more (metrics it counts from zero, a cache's settings) is
marked `fresh_app` and gets an app of its own, as every test did before.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from atrium.app import create_app
from atrium.db.base import Base
from atrium.db.engine import is_sqlite
from atrium.settings import Settings


@dataclass
class _Running:
    key: str
    app: FastAPI
    lifespan: LifespanManager
    registered: dict[str, Any] = field(default_factory=dict)


_running: dict[str, _Running] = {}  # by database URL
_wipers: dict[str, AsyncEngine] = {}  # one engine per database URL, for `empty_tables`
_sqlite_wipers: dict[str, sqlite3.Connection] = {}  # SQLite's: a plain connection


def _key(settings: Settings) -> str:
    """What makes two tests' apps the same: every setting but the Redis prefix. From the test's
    own `Settings`: building another from its values cost ~5 ms of CPU, twice per test."""
    dumped = settings.model_dump(mode="json", exclude={"redis_prefix"})
    return json.dumps(dumped, sort_keys=True, default=repr)


def _idle(app: FastAPI) -> bool:
    workers = app.state.workers
    if workers is None:
        return True
    busy = workers._executions or workers._run_tasks or workers.webhooks._sends
    return not busy


async def prepare(database_url: str, wanted: Settings | None) -> None:
    """Before a test's tables are emptied: keep this database's running app only if it is
    idle and has the `wanted` settings (None: the test needs no reused app), else stop it."""
    running = _running.get(database_url)
    if running is None:
        return
    if wanted is not None and running.key == _key(wanted) and _idle(running.app):
        return
    await _stop(database_url)


async def running(settings: Settings) -> FastAPI:
    """The app for `settings`: the one kept by `prepare`, or a new one, started."""
    url = settings.database_url
    kept = _running.get(url)
    key = _key(settings)
    if kept is not None and kept.key == key:
        return kept.app
    if kept is not None:
        await _stop(url)
    app = create_app(settings)
    lifespan = LifespanManager(app)
    await lifespan.__aenter__()
    registered = dict(app.state.workers.runtime.models._registered) if app.state.workers else {}
    _running[url] = _Running(key=key, app=app, lifespan=lifespan, registered=registered)
    return app


async def release(app: FastAPI) -> None:
    """After the test: forget what was kept in memory by ids the next test may get again (a
    SQLite table reuses the ids of deleted rows): rate-limit counters, MCP tool lists, and the
    models the test registered on its worker, and the agents built on them."""
    running = _running.get(app.state.settings.database_url)
    if running is None or running.app is not app:
        return
    await app.state.limiter.reset()
    if app.state.workers is not None:
        runtime = app.state.workers.runtime
        runtime.models._registered = dict(running.registered)
        runtime.models._built.cache_clear()
        runtime.mcp.lists._lists.clear()


async def _stop(database_url: str) -> None:
    running = _running.pop(database_url, None)
    if running is not None:
        await running.lifespan.__aexit__(None, None, None)


async def stop(database_url: str) -> None:
    """At the end of the session: stop this database's app and close the wiping engine."""
    await _stop(database_url)
    engine = _wipers.pop(database_url, None)
    if engine is not None:
        await engine.dispose()
    connection = _sqlite_wipers.pop(database_url, None)
    if connection is not None:
        connection.close()


async def empty_tables(database_url: str) -> None:
    """Delete every row, children first. DELETE, not TRUNCATE: on PostgreSQL a TRUNCATE of
    every table (new files, catalog updates) cost more than deleting the few rows a test made.
    One query first names the tables that have rows (a test touches a few of the 14): a DELETE
    per table, ~0.4 ms of CPU each on SQLite (a hop to its driver's thread), was most of it.
    On SQLite the whole of it is one hop to a thread, on a plain `sqlite3` connection."""
    if is_sqlite(database_url):
        connection = _sqlite_wipers.get(database_url)
        if connection is None:
            path = make_url(database_url).database or ""
            connection = _sqlite_wipers[database_url] = _sqlite_wiper(path)
        await asyncio.to_thread(_empty_sqlite, connection)
        return
    engine = _wipers.get(database_url)
    if engine is None:
        engine = _wipers[database_url] = create_async_engine(database_url)
    async with engine.begin() as conn:
        filled = set((await conn.execute(_FILLED)).scalars())
        for table in reversed(Base.metadata.sorted_tables):
            if table.name in filled:
                await conn.execute(text(f"DELETE FROM {table.name}"))


def _sqlite_wiper(path: str) -> sqlite3.Connection:
    """A connection for `_empty_sqlite`, used by one thread at a time (the tests run one by
    one in a process). It waits, as the app's own connections do, for a write lock the app
    may hold a moment longer."""
    connection = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


def _empty_sqlite(connection: sqlite3.Connection) -> None:
    filled = {name for (name,) in connection.execute(_FILLED.text)}
    if not filled:
        return
    with connection:  # commits the transaction, or rolls it back on an error
        connection.execute("BEGIN IMMEDIATE")
        for table in reversed(Base.metadata.sorted_tables):
            if table.name in filled:
                connection.execute(f"DELETE FROM {table.name}")


_FILLED = text(
    " UNION ALL ".join(
        f"SELECT '{table.name}' WHERE EXISTS (SELECT 1 FROM {table.name})"
        for table in Base.metadata.sorted_tables
    )
)
