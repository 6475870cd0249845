"""A request that finds every pooled database connection busy past the pool's timeout is
answered 503 BUSY with Retry-After (PostgreSQL; SQLite's reads never wait on a pool): an
overloaded process, not a server error."""

from __future__ import annotations

import contextlib

import httpx
import pytest
from fastapi import FastAPI

from atrium.db.engine import Database


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"db_pool_size": 1, "db_pool_timeout_seconds": 0.2}


async def test_an_exhausted_pool_answers_503_busy(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    if db.sqlite:
        pytest.skip("PostgreSQL: SQLite's point reads use no pool")
    assert (await client.get("/v1/account", headers=auth)).status_code == 200
    async with contextlib.AsyncExitStack() as held:
        for _ in range(2):  # pool size 1 + overflow 1
            await held.enter_async_context(db.write_engine.connect())
        response = await client.get("/v1/account", headers=auth)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "BUSY"
    assert response.headers["Retry-After"] == "1"
    assert (await client.get("/v1/account", headers=auth)).status_code == 200
