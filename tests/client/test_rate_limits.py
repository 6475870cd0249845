"""429s: the error tells when the window resets; the opt-in retry waits `Retry-After`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from atrium.client import AsyncClient, Client, RateLimitError
from tests.client.conftest import Server, _serve

LIMIT = 3
WINDOW = 3


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory, slow_llm: str) -> Iterator[Server]:
    """A server whose standard tier allows 3 requests per 3 seconds per group."""
    yield from _serve(
        tmp_path_factory.mktemp("limited"),
        "limited",
        slow_llm,
        ATRIUM_RATE_LIMIT_STANDARD=f"{LIMIT}/{WINDOW} seconds",
    )


def _spend(client: Client) -> None:
    for _ in range(LIMIT):
        client.agents.list()


def _exhaust(server: Server, key: str) -> RateLimitError:
    """Call until the key's budget is spent (a window may roll over meanwhile); the 429."""
    with Client(server.url, key) as client:
        for _ in range(LIMIT * 3):
            try:
                client.agents.list()
            except RateLimitError as exc:
                return exc
    raise AssertionError("never rate limited")


def test_429_raises_with_the_reset_time(limited: Server) -> None:
    with Client(limited.url, limited.new_key()) as client:
        _spend(client)
        with pytest.raises(RateLimitError) as caught:
            client.agents.list()
    error = caught.value
    assert (error.status_code, error.code) == (429, "RATE_LIMITED")
    assert error.limit == LIMIT and error.details["limit"] == LIMIT
    assert error.reset_at is not None
    now = datetime.now(UTC)
    assert now - timedelta(seconds=1) <= error.reset_at <= now + timedelta(seconds=WINDOW + 1)
    assert error.retry_after is not None and 1 <= error.retry_after <= WINDOW
    assert error.headers["x-ratelimit-remaining"] == "0"


def test_opt_in_retry_honours_retry_after(limited: Server) -> None:
    key = limited.new_key()
    _exhaust(limited, key)
    with Client(limited.url, key, rate_limit_retries=3) as client:
        started = time.monotonic()
        agents = client.agents.list()
        waited = time.monotonic() - started
    assert agents == [], "the retried request succeeded (a new account has no agents yet)"
    # The window is seconds long and was spent a moment ago: the first try was a 429 whose
    # Retry-After (whole seconds, at least 1) the client slept before trying again.
    assert waited >= 1.0


def test_retry_gives_up_when_the_wait_is_too_long(limited: Server) -> None:
    key = limited.new_key()
    _exhaust(limited, key)
    with Client(limited.url, key, rate_limit_retries=3, max_retry_wait=0.1) as client:
        started = time.monotonic()
        with pytest.raises(RateLimitError):
            client.agents.list()
    assert time.monotonic() - started < 0.5


async def test_async_retry(limited: Server) -> None:
    key = limited.new_key()
    _exhaust(limited, key)
    async with AsyncClient(limited.url, key, rate_limit_retries=3) as client:
        started = time.monotonic()
        agents = await client.agents.list()
        waited = time.monotonic() - started
    assert agents == []
    assert waited >= 1.0
