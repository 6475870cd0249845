"""Health, readiness, metrics and the headers every response carries."""

from __future__ import annotations

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from atrium.app import create_app
from atrium.auth.service import IssuedKey
from atrium.settings import Settings


async def test_healthz_answers_without_a_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert len(response.headers["x-request-id"]) >= 16


async def test_health_answers_head_probes(client: httpx.AsyncClient) -> None:
    for path in ("/healthz", "/readyz"):
        response = await client.head(path)
        assert response.status_code == 200, path
        assert response.content == b""


async def test_readyz_checks_the_database(client: httpx.AsyncClient) -> None:
    response = await client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["checks"] == {"database": "ok"}


async def test_a_safe_incoming_request_id_is_echoed(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz", headers={"X-Request-ID": "trace-123.abc"})
    assert response.headers["x-request-id"] == "trace-123.abc"
    hostile = await client.get("/healthz", headers={"X-Request-ID": "a\tb<script>"})
    assert hostile.headers["x-request-id"] != "a\tb<script>"


@pytest.mark.fresh_app  # counts requests from zero
async def test_metrics_count_requests_by_route_template(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    await client.get("/healthz")
    await client.get("/v1/account", headers=auth)
    body = (await client.get("/metrics")).text
    assert 'atrium_http_requests_total{method="GET",route="/healthz",status="200"} 1.0' in body
    assert 'route="/v1/account",status="200"' in body
    assert "atrium_http_request_duration_seconds_bucket" in body


async def test_metrics_carry_no_account_data(
    client: httpx.AsyncClient, auth: dict[str, str], api_key: IssuedKey
) -> None:
    await client.get("/v1/account", headers=auth)
    body = (await client.get("/metrics")).text
    assert api_key.key not in body
    assert api_key.account_name not in body


async def _ready(app: FastAPI) -> httpx.Response:
    """`/readyz` of an app whose lifespan never ran: its parts unstarted, as after a failed
    start, so a store that does not answer is reported rather than refusing the start."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await client.get("/readyz")


async def _close(app: FastAPI) -> None:
    await app.state.db.dispose()
    if app.state.redis is not None:
        await app.state.redis.aclose()


async def test_readyz_checks_redis_when_it_is_configured(
    settings: Settings, redis_url: str
) -> None:
    app = create_app(settings.model_copy(update={"redis_url": redis_url}))
    async with LifespanManager(app):
        response = await _ready(app)
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "redis": "ok"}}


async def test_readyz_is_unavailable_while_redis_does_not_answer(settings: Settings) -> None:
    # Nothing listens on port 1 of the loopback address.
    app = create_app(settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"}))
    try:
        response = await _ready(app)
    finally:
        await _close(app)
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "checks": {"database": "ok", "redis": "error: ConnectionError"},
    }


async def test_readyz_is_unavailable_while_the_database_does_not_answer(
    settings: Settings,
) -> None:
    down = "postgresql+asyncpg://postgres@127.0.0.1:1/test"
    app = create_app(settings.model_copy(update={"database_url": down}))
    try:
        response = await _ready(app)
    finally:
        await _close(app)
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"].startswith("error: ")
    assert "redis" not in body["checks"]  # none configured
