"""Fixtures: a real database per backend (SQLite always, PostgreSQL when configured), a real app.

- `ATRIUM_TEST_POSTGRES_URL` (e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test): every
  database test runs on PostgreSQL too, in a fresh database created for this test session.
- `ATRIUM_TEST_REDIS_URL` (e.g. redis://127.0.0.1:6379/0): Redis-backed tests run.

Each backend is migrated once per session with Alembic; every test starts from empty tables,
except a test marked `keep_tables`: its module seeded records once (a module-scoped fixture that
empties the tables itself) and its tests keep apart by account.

The `app` of a test is reused by the next test that asks for the same settings while it is idle
(tests/apps.py): starting an app (engines, worker pool, webhook sender, FastAPI's per-route state
built on first request) cost more CPU than most tests themselves. A test that changes an app's
insides beyond its data (its metrics, a cache's settings) marks itself `fresh_app`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.app import create_app
from atrium.auth.service import IssuedKey, create_key
from atrium.db.engine import Database
from atrium.db.migrate import upgrade
from atrium.process_tuning.gc_thresholds import (
    MIDDLE_COLLECTIONS,
    OLD_COLLECTIONS,
    YOUNG_COLLECTION,
)
from atrium.settings import Settings
from tests import apps
from tests.dns_server import DNSServer

POSTGRES_URL = os.environ.get("ATRIUM_TEST_POSTGRES_URL")
REDIS_URL = os.environ.get("ATRIUM_TEST_REDIS_URL")
# Skip reasons say how to run what they skip (the run's summary groups skips by reason).
_POSTGRES_HINT = (
    "set ATRIUM_TEST_POSTGRES_URL=postgresql+asyncpg://postgres@127.0.0.1:5432/test "
    "(.ci/run does when PostgreSQL answers there)"
)
_REDIS_HINT = (
    "set ATRIUM_TEST_REDIS_URL=redis://127.0.0.1:6379/0 (.ci/run does when Redis answers there)"
)

BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not POSTGRES_URL, reason=f"PostgreSQL variant: {_POSTGRES_HINT}"),
        ],
    ),
]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores. Much of the suite waits (servers starting,
    slow models, the guides' commands): on 2 cores two workers kept the CPU 1.3 cores busy.
    Full runs, 2 workers: 605, 636, 664 s (calibration 18-32 ms); 3 workers: 561, 620 s
    (calibration 18-34 ms)."""
    return (os.cpu_count() or 1) + 1


def pytest_report_header() -> str:
    """The machine's speed today, so a slow CI log explains itself: the CPU time of
    `sum(range(10**6))`, the calibration every benchmark figure is stated in. Printed by the
    controlling process only, so once per run even with xdist's workers."""
    _calibrations.append(_calibration())
    return f"calibration: sum(range(10**6)) takes {_calibrations[0]:.1f} ms of CPU"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Again at the end, beside the run's own times: a machine that slowed down meanwhile."""
    now = _calibration()
    started = f"{_calibrations[0]:.1f} ms of CPU at the start, " if _calibrations else ""
    terminalreporter.write_line(
        f"calibration: sum(range(10**6)) took {started}{now:.1f} ms at the end"
    )


_calibrations: list[float] = []


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """The heap collection built (every library, atrium, the test modules, Hypothesis's and
    schemathesis's state) is moved out of the collector's reach before the tests run: it never
    becomes garbage, and each full collection walked all of it again, a tenth of a worker's CPU
    in modules of many small tests (1.26 -> 0.65 s of 14.6 in three such modules, calibration
    ~12 ms). What the tests allocate is collected under the thresholds the server sets for
    itself (`atrium.process_tuning.gc_thresholds.tune_gc`): the apps of the tests run in this
    process, and CPython's default young threshold (700) collected about fourteen times as
    often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION, MIDDLE_COLLECTIONS, OLD_COLLECTIONS)


def _calibration() -> float:
    return min(_calibration_ms() for _ in range(3))


def _calibration_ms() -> float:
    start = time.process_time()
    sum(range(10**6))
    return (time.process_time() - start) * 1000


@contextlib.asynccontextmanager
async def database_of_its_own(backend: str, sqlite_file: Path) -> AsyncIterator[str]:
    """The URL of a database no other test uses, not migrated: the SQLite file `sqlite_file`,
    or a PostgreSQL database made for it and dropped after."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{sqlite_file}"
        return
    assert POSTGRES_URL is not None
    url, drop = await _create_postgres_database(POSTGRES_URL)
    try:
        yield url
    finally:
        await drop()


async def _create_postgres_database(base_url: str) -> tuple[str, Callable[[], Awaitable[None]]]:
    url = make_url(base_url)
    name = f"atrium_test_{os.getpid()}_{secrets.token_hex(3)}"
    admin = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))

    async def drop() -> None:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()

    return url.set(database=name).render_as_string(hide_password=False), drop


class Databases:
    """The session's migrated databases, one per backend, each made on first use and dropped
    at the end of the session: `await databases.url("sqlite")`. Through it a test that wants
    both backends at once (the fuzz test: each generated case sent to both, so Hypothesis
    generates it once) shares them with every other test of the session."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        self._urls: dict[str, str] = {}
        self._drops: list[Callable[[], Awaitable[None]]] = []

    async def url(self, backend: str) -> str:
        if backend not in self._urls:
            self._urls[backend] = await self._create(backend)
        return self._urls[backend]

    def available(self) -> list[str]:
        """The backends this session can test: SQLite always, PostgreSQL when configured."""
        return ["sqlite", "postgres"] if POSTGRES_URL else ["sqlite"]

    async def _create(self, backend: str) -> str:
        if backend == "sqlite":
            path: Path = self._tmp.mktemp("db") / "atrium.db"
            url = f"sqlite+aiosqlite:///{path}"
        else:
            assert POSTGRES_URL is not None
            url, drop = await _create_postgres_database(POSTGRES_URL)
            self._drops.append(drop)
        await asyncio.to_thread(upgrade, Settings(database_url=url, _env_file=None))
        return url

    async def close(self) -> None:
        for url in self._urls.values():
            await apps.stop(url)
        for drop in self._drops:
            await drop()


@pytest.fixture(scope="session")
async def databases(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Databases]:
    made = Databases(tmp_path_factory)
    try:
        yield made
    finally:
        await made.close()


@pytest.fixture(scope="session", params=BACKENDS)
async def database_url(request: pytest.FixtureRequest, databases: Databases) -> AsyncIterator[str]:
    """A migrated database for the whole session, per backend."""
    url = await databases.url(request.param)
    yield url
    # The tests of the other backend come next: this one's reused app stops polling.
    await apps.stop(url)


@pytest.fixture(scope="session")
def quiet_dns() -> Iterator[DNSServer]:
    """A DNS server on loopback that knows no name: every app of the tests asks it unless a
    test points `dns_nameservers` elsewhere, so no lookup ever leaves the machine (the system
    resolver may be anywhere) and each one fails fast (NXDOMAIN)."""
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
async def _no_reused_app_beside_own_processes(request: pytest.FixtureRequest) -> None:
    """A test that uses the session's database without the `app` fixture (servers of its own,
    apps made from `settings`) must be the only one claiming its runs: a reused app still
    running on that database is stopped first."""
    if "database_url" in request.fixturenames and "app" not in request.fixturenames:
        await apps.prepare(request.getfixturevalue("database_url"), None)


async def _empty_tables(url: str) -> None:
    """Every row of the database at `url` deleted, and no reused app left running on it."""
    await apps.prepare(url, None)
    await apps.empty_tables(url)


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    """Override in a test module (or with `@pytest.mark.parametrize`) to change settings."""
    return {}


@pytest.fixture
async def settings(
    request: pytest.FixtureRequest,
    database_url: str,
    settings_overrides: dict[str, object],
    quiet_dns: DNSServer,
) -> Settings:
    made = build_settings(database_url, quiet_dns, settings_overrides)
    wanted: Settings | None = made
    if request.node.get_closest_marker("fresh_app"):
        wanted = None
    if "app" not in request.fixturenames or made.redis_url:
        # The test starts apps of its own (no other worker may claim its runs), or shares
        # Redis counters and channels with them (under a prefix of its own).
        wanted = None
    await apps.prepare(database_url, wanted)
    if not request.node.get_closest_marker("keep_tables"):
        await apps.empty_tables(database_url)
    return made


def build_settings(
    database_url: str, quiet_dns: DNSServer, overrides: dict[str, object]
) -> Settings:
    """A test's settings, as the `settings` fixture makes them: also for a module-scoped
    fixture that wants the app its module's tests will reuse."""
    values: dict[str, object] = {
        "database_url": database_url,
        "dns_nameservers": [quiet_dns.address],
        "redis_url": None,
    }
    values.update(overrides)
    # A fresh prefix keeps every test's Redis counters and channels apart.
    prefix = values.pop("redis_prefix", None) or f"atrium-test-{secrets.token_hex(4)}"
    try:
        # The environment too: pydantic-settings reads it, and a test may have set a variable.
        # Not PYTEST_CURRENT_TEST, which pytest sets to each test's id (no setting reads it):
        # with it in the key every test missed and validated its settings again.
        environment = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
        key: str | None = json.dumps([values, environment], sort_keys=True)
    except (TypeError, ValueError):  # a value JSON cannot write: validated afresh, not kept
        key = None
    validated = _validated.get(key) if key is not None else None
    if validated is None:
        made = Settings(_env_file=None, redis_prefix=prefix, **values)  # type: ignore[arg-type]
        if key is not None:
            _validated[key] = made
        return made
    return validated.model_copy(update={"redis_prefix": prefix}, deep=True)


# Settings validated once per set of values and environment, copied for each test with its own
# Redis prefix: validating them again (pydantic-settings reads the environment and checks ~100
# fields) cost ~2.4 ms of CPU per test, calibration ~12 ms.
_validated: dict[str, Settings] = {}


@pytest.fixture
async def app(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[FastAPI]:
    if request.node.get_closest_marker("fresh_app"):
        application = create_app(settings)
        async with LifespanManager(application):
            yield application
        return
    application = await apps.running(settings)
    try:
        yield application
    finally:
        await apps.release(application)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        yield http


@pytest.fixture
def db(app: FastAPI) -> Database:
    """The app's own database handle, for fixtures that build data through services."""
    database: Database = app.state.db
    return database


KeyFactory = Callable[..., Awaitable[IssuedKey]]


@pytest.fixture
def make_key(db: Database) -> KeyFactory:
    """`await make_key(account="acme", tier="premium")`: a key made through the auth service."""

    async def factory(account: str | None = None, tier: str = "standard") -> IssuedKey:
        async with db.transaction() as session:
            return await create_key(
                session, account_name=account or f"acct-{secrets.token_hex(4)}", tier=tier
            )

    return factory


@pytest.fixture
async def api_key(make_key: KeyFactory) -> IssuedKey:
    return await make_key()


@pytest.fixture
def auth(api_key: IssuedKey) -> dict[str, str]:
    """Headers that authenticate as `api_key`."""
    return bearer(api_key.key)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def redis_url() -> str:
    if not REDIS_URL:
        pytest.skip(f"Redis: {_REDIS_HINT}")
    return REDIS_URL
