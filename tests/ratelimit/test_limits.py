"""Rate limits: exact per key and group, tier numbers, headers, 429 with Retry-After, Redis."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager

from atrium.app import create_app
from atrium.auth.service import IssuedKey
from atrium.settings import Settings
from tests.conftest import KeyFactory, bearer


def rate_headers(response: httpx.Response) -> tuple[int, int, int]:
    return (
        int(response.headers["x-ratelimit-limit"]),
        int(response.headers["x-ratelimit-remaining"]),
        int(response.headers["x-ratelimit-reset"]),
    )


async def hammer(http: httpx.AsyncClient, key: str, count: int, path: str = "/v1/account") -> None:
    """`count` requests, 20 at a time; all must succeed."""
    semaphore = asyncio.Semaphore(20)

    async def one() -> None:
        async with semaphore:
            response = await http.get(path, headers=bearer(key))
            assert response.status_code == 200, response.text

    await asyncio.gather(*(one() for _ in range(count)))


def assert_rate_limited(response: httpx.Response, limit: int) -> None:
    assert response.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "RATE_LIMITED"
    assert error["details"]["limit"] == limit
    got_limit, remaining, reset = rate_headers(response)
    assert (got_limit, remaining) == (limit, 0)
    assert error["details"]["reset"] == reset
    retry_after = int(response.headers["retry-after"])
    assert 1 <= retry_after <= 3600
    assert reset - time.time() <= 3600 + 1


async def test_the_1001st_request_of_a_standard_key_is_429(
    client: httpx.AsyncClient, api_key: IssuedKey
) -> None:
    await hammer(client, api_key.key, 1000)
    assert_rate_limited(await client.get("/v1/account", headers=bearer(api_key.key)), 1000)


async def test_headers_count_down_and_share_one_reset(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    seen = [rate_headers(await client.get("/v1/account", headers=auth)) for _ in range(3)]
    assert [remaining for _, remaining, _ in seen] == [999, 998, 997]
    assert {limit for limit, _, _ in seen} == {1000}
    assert len({reset for _, _, reset in seen}) == 1
    assert time.time() < seen[0][2] <= time.time() + 3600 + 1


async def test_premium_tier_has_its_own_limit(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> None:
    premium = await make_key(tier="premium")
    response = await client.get("/v1/account", headers=bearer(premium.key))
    assert rate_headers(response)[:2] == (10000, 9999)


async def test_each_group_and_each_key_has_its_own_budget(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> None:
    first, second = await make_key(), await make_key()
    await client.get("/v1/account", headers=bearer(first.key))
    await client.get("/v1/account", headers=bearer(first.key))
    other_group = await client.get("/api/v1/nothing-here", headers=bearer(first.key))
    assert other_group.status_code == 404
    assert rate_headers(other_group)[1] == 999
    other_key = await client.get("/v1/account", headers=bearer(second.key))
    assert rate_headers(other_key)[1] == 999


async def test_requests_without_a_valid_key_are_counted_per_client(
    client: httpx.AsyncClient,
) -> None:
    first = await client.get("/v1/account")
    second = await client.get("/v1/account", headers=bearer("atr_wrong-wrong-wrong-wrong"))
    assert first.status_code == second.status_code == 401
    assert rate_headers(second)[1] == rate_headers(first)[1] - 1


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    # A small PostgreSQL pool: `hammer` sends 20 requests at once, which opened 20 connections
    # per app (pool 10 + overflow 10), 40 with two apps. Beside the other apps of a loaded
    # machine's test runs that passed the server's `max_connections` (100), and requests got
    # 500 `too many clients already`. The limits count the same with 2 connections as with 20.
    return {"rate_limit_anonymous": "3/hour", "db_pool_size": 2}


async def test_key_guessing_is_rate_limited(client: httpx.AsyncClient) -> None:
    for _ in range(3):
        assert (await client.get("/v1/account")).status_code == 401
    assert_rate_limited(await client.get("/v1/account"), 3)


async def test_outside_the_groups_there_are_no_rate_headers(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert "x-ratelimit-limit" not in response.headers


@pytest.mark.redis
async def test_two_app_instances_sharing_redis_count_together(
    settings: Settings, redis_url: str, make_key: KeyFactory
) -> None:
    shared = settings.model_copy(update={"redis_url": redis_url})
    key = await make_key()

    async def instance() -> AsyncIterator[httpx.AsyncClient]:
        app = create_app(shared)
        async with LifespanManager(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                yield c

    first_gen, second_gen = instance(), instance()
    first, second = await anext(first_gen), await anext(second_gen)
    try:
        await asyncio.gather(hammer(first, key.key, 500), hammer(second, key.key, 500))
        assert_rate_limited(await first.get("/v1/account", headers=bearer(key.key)), 1000)
        assert_rate_limited(await second.get("/v1/account", headers=bearer(key.key)), 1000)
        ready = await first.get("/readyz")
        assert ready.json()["checks"] == {"database": "ok", "redis": "ok"}
    finally:
        for gen in (first_gen, second_gen):
            await gen.aclose()


@pytest.mark.redis
async def test_a_burst_beyond_the_redis_pool_waits_for_a_connection(
    settings: Settings, redis_url: str, make_key: KeyFactory
) -> None:
    """300 requests at once on a pool of 2 connections: every one answered, none a 500
    (redis-py's default pool raised MaxConnectionsError past its cap)."""
    small = settings.model_copy(update={"redis_url": redis_url, "redis_max_connections": 2})
    key = await make_key()
    app = create_app(small)
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            answers = await asyncio.gather(
                *(c.get("/v1/account", headers=bearer(key.key)) for _ in range(300))
            )
    assert sorted({a.status_code for a in answers}) == [200]
    assert {a.headers["x-ratelimit-remaining"] for a in answers} >= {"700", "999"}
