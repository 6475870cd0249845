"""Health, readiness, metrics and the headers every response carries."""

from __future__ import annotations

import httpx
import pytest

from atrium.auth.service import IssuedKey


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
