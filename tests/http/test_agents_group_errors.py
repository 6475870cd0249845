"""The generic error model, seen through the agents group: every failure is the one error body
and every response (200, 400, 401, 404, 405, 413, 415, 429) carries consistent rate headers."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.conftest import KeyFactory

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {
        "rate_limit_standard": "8/hour",
        "rate_limit_anonymous": "3/hour",
        "max_body_bytes": 300,
    }


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    for name in RATE_HEADERS:
        assert name in response.headers
    details: dict[str, object] = body["error"]["details"]
    return details


def rate(response: httpx.Response) -> tuple[int, int, int]:
    limit, remaining, reset = (int(response.headers[name]) for name in RATE_HEADERS)
    return limit, remaining, reset


async def test_bad_json_is_400_on_body(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post(
        "/v1/agents", content=b'{"name": ', headers={**auth, "Content-Type": "application/json"}
    )
    assert assert_error(response, 400, "INVALID_PARAMETER") == {"parameter": "body"}


async def test_array_body_is_400_on_body(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post("/v1/agents", json=[{"name": "a"}], headers=auth)
    assert assert_error(response, 400, "INVALID_PARAMETER") == {"parameter": "body"}


async def test_missing_body_is_400_on_body(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post("/v1/agents", headers=auth)
    assert assert_error(response, 400, "INVALID_PARAMETER") == {"parameter": "body"}


@pytest.mark.parametrize(
    "content_type",
    ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
async def test_wrong_content_type_is_415(
    client: httpx.AsyncClient, auth: dict[str, str], content_type: str
) -> None:
    response = await client.post(
        "/v1/agents", content=b'{"name": "a"}', headers={**auth, "Content-Type": content_type}
    )
    assert_error(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert (await client.get("/v1/agents", headers=auth)).json() == {"data": []}


async def test_json_with_charset_is_accepted(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        "/v1/agents",
        content=b'{"name": "a"}',
        headers={**auth, "Content-Type": "application/json; charset=utf-8"},
    )
    assert response.status_code == 201


async def test_oversized_body_is_413(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post(
        "/v1/agents", json={"name": "a", "description": "x" * 400}, headers=auth
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")
    assert (await client.get("/v1/agents", headers=auth)).json() == {"data": []}


async def test_oversized_chunked_body_is_413(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"name": "a", "description": "'
        for _ in range(10):
            yield b"x" * 50
        yield b'"}'

    response = await client.post(
        "/v1/agents", content=chunks(), headers={**auth, "Content-Type": "application/json"}
    )
    assert_error(response, 413, "PAYLOAD_TOO_LARGE")


@pytest.mark.parametrize("path", ["/v1/nothing-here", "/v1/agents/a/b", "/v1/analytics"])
async def test_unknown_path_is_404(
    client: httpx.AsyncClient, auth: dict[str, str], path: str
) -> None:
    assert_error(await client.get(path, headers=auth), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path"),
    [("PATCH", "/v1/agents/agt_x"), ("DELETE", "/v1/agents"), ("POST", "/v1/analytics/usage")],
)
async def test_wrong_method_is_405(
    client: httpx.AsyncClient, auth: dict[str, str], method: str, path: str
) -> None:
    response = await client.request(method, path, json={}, headers=auth)
    assert_error(response, 405, "METHOD_NOT_ALLOWED")


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/v1/agents/agt_x", "GET, HEAD, PUT, DELETE"),
        ("/v1/agents", "GET, HEAD, POST"),
        ("/api/v1/domains/1", "GET, HEAD, PUT, PATCH, DELETE"),
        ("/api/v1/public/agent/runs", "GET, HEAD, POST"),
    ],
)
async def test_a_405_allows_every_method_of_its_path(
    client: httpx.AsyncClient, auth: dict[str, str], path: str, allow: str
) -> None:
    """`Allow` names every method the path takes, not only the first route's (RFC 9110)."""
    response = await client.request("OPTIONS", path, headers=auth)
    assert_error(response, 405, "METHOD_NOT_ALLOWED")
    assert response.headers["allow"] == allow


async def test_rate_headers_are_consistent_across_200_400_404_and_429(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    before = time.time()
    first = await client.post("/v1/agents", json={"name": "ok"}, headers=auth)  # 201
    # The window opens at the first hit, somewhere between `before` and now.
    after_first = time.time()
    responses = [
        first,
        await client.get("/v1/agents", headers=auth),  # 200
        await client.post("/v1/agents", json={"name": ""}, headers=auth),  # 400
        await client.get("/v1/agents/agt_missing", headers=auth),  # 404
        await client.get("/v1/analytics/usage", params={"end_date": "x"}, headers=auth),  # 400
        await client.get("/v1/analytics/usage", headers=auth),  # 200
        await client.get("/v1/nowhere", headers=auth),  # 404
        await client.patch("/v1/agents", json={}, headers=auth),  # 405
    ]
    assert [r.status_code for r in responses] == [201, 200, 400, 404, 400, 200, 404, 405]
    readings = [rate(r) for r in responses]
    assert [limit for limit, _, _ in readings] == [8] * 8
    assert [remaining for _, remaining, _ in readings] == [7, 6, 5, 4, 3, 2, 1, 0]
    resets = {reset for _, _, reset in readings}
    assert len(resets) == 1
    (reset,) = resets
    assert before < reset <= after_first + 3600 + 1  # rounded up to whole seconds

    limited = await client.get("/v1/agents", headers=auth)
    details = assert_error(limited, 429, "RATE_LIMITED")
    assert rate(limited) == (8, 0, reset)
    assert details == {"limit": 8, "reset": reset}
    assert 1 <= int(limited.headers["retry-after"]) <= 3600
    # Over the limit, even a request that would be a 400 or a 404 is refused with 429.
    for path in ("/v1/agents/agt_missing", "/v1/analytics/usage?start_date=bad"):
        assert_error(await client.get(path, headers=auth), 429, "RATE_LIMITED")


async def test_401_carries_the_anonymous_budget(client: httpx.AsyncClient) -> None:
    readings = []
    for headers in ({}, {"Authorization": "Bearer atr_wrong-key-wrong-key"}, {}):
        response = await client.get("/v1/agents", headers=headers)
        assert_error(response, 401, "UNAUTHORIZED")
        readings.append(rate(response))
    assert [(limit, remaining) for limit, remaining, _ in readings] == [(3, 2), (3, 1), (3, 0)]
    assert_error(await client.get("/v1/agents"), 429, "RATE_LIMITED")


async def test_a_key_over_its_limit_does_not_spend_another_keys_budget(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    for _ in range(8):
        await client.get("/v1/agents", headers=auth)
    assert (await client.get("/v1/agents", headers=auth)).status_code == 429
    other = await make_key()
    response = await client.get("/v1/agents", headers={"Authorization": f"Bearer {other.key}"})
    assert response.status_code == 200
    assert rate(response)[:2] == (8, 7)


async def test_a_premium_key_has_the_premium_budget(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> None:
    premium = await make_key(tier="premium")
    headers = {"Authorization": f"Bearer {premium.key}"}
    first = await client.get("/v1/analytics/usage", headers=headers)
    second = await client.get("/v1/agents/agt_missing", headers=headers)
    assert (first.status_code, second.status_code) == (200, 404)
    assert rate(first)[:2] == (10_000, 9_999)
    assert rate(second)[:2] == (10_000, 9_998)
