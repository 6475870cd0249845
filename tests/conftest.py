"""Fixtures: a real database per backend (SQLite always, PostgreSQL when configured), a real app.

- `ATRIUM_TEST_POSTGRES_URL` (e.g. postgresql+asyncpg://postgres@127.0.0.1:5432/test): every
  database test runs on PostgreSQL too, in a fresh database created for this test session.
- `ATRIUM_TEST_REDIS_URL` (e.g. redis://127.0.0.1:6379/0): Redis-backed tests run.

Each backend is migrated once per session with Alembic; every test starts from empty tables.
"""

from __future__ import annotations

import asyncio
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
from atrium.db.base import Base
from atrium.db.engine import Database
from atrium.db.migrate import upgrade
from atrium.settings import Settings
from tests.dns_server import DNSServer

POSTGRES_URL = os.environ.get("ATRIUM_TEST_POSTGRES_URL")
REDIS_URL = os.environ.get("ATRIUM_TEST_REDIS_URL")

BACKENDS = [
    "sqlite",
    pytest.param(
        "postgres",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not POSTGRES_URL, reason="ATRIUM_TEST_POSTGRES_URL is not set"),
        ],
    ),
]


def pytest_report_header() -> str:
    """The machine's speed today, so a slow CI log explains itself: the CPU time of
    `sum(range(10**6))`, the calibration every benchmark figure is stated in."""
    best = min(_calibration_ms() for _ in range(3))
    return f"calibration: sum(range(10**6)) takes {best:.1f} ms of CPU"


def _calibration_ms() -> float:
    start = time.process_time()
    sum(range(10**6))
    return (time.process_time() - start) * 1000


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


@pytest.fixture(scope="session", params=BACKENDS)
async def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A migrated database for the whole session, per backend."""
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("db") / "atrium.db"
        url = f"sqlite+aiosqlite:///{path}"
        await asyncio.to_thread(upgrade, Settings(database_url=url, _env_file=None))
        yield url
        return
    assert POSTGRES_URL is not None
    url, drop = await _create_postgres_database(POSTGRES_URL)
    try:
        await asyncio.to_thread(upgrade, Settings(database_url=url, _env_file=None))
        yield url
    finally:
        await drop()


async def _empty_tables(url: str) -> None:
    engine = create_async_engine(url)
    tables = [table.name for table in reversed(Base.metadata.sorted_tables)]
    async with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            await conn.execute(text(f"TRUNCATE {', '.join(tables)} CASCADE"))
        else:
            for name in tables:
                await conn.execute(text(f"DELETE FROM {name}"))
    await engine.dispose()


@pytest.fixture(scope="session")
def quiet_dns() -> Iterator[DNSServer]:
    """A DNS server on loopback that knows no name: every app of the tests asks it unless a
    test points `dns_nameservers` elsewhere, so no lookup ever leaves the machine (the system
    resolver may be anywhere) and each one fails fast (NXDOMAIN)."""
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    """Override in a test module (or with `@pytest.mark.parametrize`) to change settings."""
    return {}


@pytest.fixture
async def settings(
    database_url: str, settings_overrides: dict[str, object], quiet_dns: DNSServer
) -> Settings:
    await _empty_tables(database_url)
    values: dict[str, object] = {
        "database_url": database_url,
        "dns_nameservers": [quiet_dns.address],
        "redis_url": None,
        # A fresh prefix keeps every test's Redis counters and channels apart.
        "redis_prefix": f"atrium-test-{secrets.token_hex(4)}",
    }
    values.update(settings_overrides)
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with LifespanManager(application):
        yield application


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
        pytest.skip("ATRIUM_TEST_REDIS_URL is not set")
    return REDIS_URL
