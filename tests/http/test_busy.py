"""A request that finds every pooled database connection busy past the pool's timeout is
answered 503 BUSY with Retry-After (PostgreSQL; SQLite's reads never wait on a pool): an
overloaded process, not a server error."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.app import create_app
from atrium.db.engine import Database
from tests.conftest import build_settings
from tests.dns_server import DNSServer


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"db_pool_size": 1, "db_pool_timeout_seconds": 0.2}


@pytest.mark.parametrize(
    ("pool", "path"),
    [
        # `GET /v1/account` reads only the key: a point read.
        ("point reads", "/v1/account"),
        # A list reads through a session, after the key's point read.
        ("sessions", "/v1/agents"),
    ],
)
async def test_an_exhausted_pool_answers_503_busy(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, pool: str, path: str
) -> None:
    if db.sqlite:
        pytest.skip("PostgreSQL: SQLite's point reads use no pool")
    assert db.point_engine is not None
    # Point reads: pool size 1, no overflow. Sessions: pool size 1 + overflow 1.
    engine, connections = (db.point_engine, 1) if pool == "point reads" else (db.write_engine, 2)
    assert (await client.get(path, headers=auth)).status_code == 200
    async with contextlib.AsyncExitStack() as held:
        for _ in range(connections):
            await held.enter_async_context(engine.connect())
        response = await client.get(path, headers=auth)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "BUSY"
    assert response.headers["Retry-After"] == "1"
    assert (await client.get(path, headers=auth)).status_code == 200


@pytest.fixture
async def limited_role(database_url: str) -> AsyncIterator[str]:
    """The session's PostgreSQL database reached as a role of its own that PostgreSQL allows two
    connections (one for the app's point reads, one for its sessions): what `max_connections`
    does to every client of a full server (roles are cluster-wide, hence a fresh name)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("PostgreSQL: SQLite has no connections to refuse")
    role = f"atrium_two_{secrets.token_hex(4)}"
    admin = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f"CREATE ROLE {role} LOGIN CONNECTION LIMIT 2"))
        await conn.execute(text(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}"))
        await conn.execute(text(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {role}"))
    try:
        yield make_url(database_url).set(username=role).render_as_string(hide_password=False)
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f"DROP OWNED BY {role}"))
            await conn.execute(text(f"DROP ROLE {role}"))
        await admin.dispose()


async def test_postgresql_refusing_a_connection_answers_503_busy(
    limited_role: str, quiet_dns: DNSServer, auth: dict[str, str]
) -> None:
    """PostgreSQL's "too many clients" (sqlstate 53300) is load, as a full pool is: 503 BUSY,
    not 500. The app's session pool may open a second connection; PostgreSQL refuses it."""
    settings = build_settings(limited_role, quiet_dns, {"run_worker": False})
    app = create_app(settings)
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            # A list: the key's point read, then a session (one connection of each pool).
            assert (await client.get("/v1/agents", headers=auth)).status_code == 200
            db: Database = app.state.db
            async with db.write_engine.connect():  # the sessions' one connection, held
                response = await client.get("/v1/agents", headers=auth)
            assert response.status_code == 503, response.text
            assert response.json()["error"]["code"] == "BUSY"
            assert response.headers["Retry-After"] == "1"
            assert (await client.get("/v1/agents", headers=auth)).status_code == 200
