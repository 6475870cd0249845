"""A dropped event stream is resumed with `Last-Event-ID`; every event arrives exactly once.

The client talks to the server through `DroppingProxy`, which tears the `/events` response in
the middle of a frame and closes the connection, while the run is still going.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from atrium.client import AsyncClient, Client, MessageDelta, RunCompleted, StreamError
from tests.client.conftest import SLOW_WORDS, Server
from tests.client.proxy import DroppingProxy

ANSWER = " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))


@pytest.fixture
def proxy(server: Server) -> Iterator[DroppingProxy]:
    dropping = DroppingProxy(server.port, after=5, drops=2)
    yield dropping
    dropping.close()


def test_stream_resumes_after_a_dropped_connection(
    proxy: DroppingProxy, api_key: str, slow_agent: str
) -> None:
    reconnects: list[tuple[int, str]] = []
    with Client(proxy.url, api_key) as client:
        created = client.runs.create("Survive a flaky network", agent_id=slow_agent)
        events = list(
            client.runs.stream(
                created.run_id,
                on_reconnect=lambda last, error: reconnects.append((last, type(error).__name__)),
            )
        )
        finished = client.runs.get(created.run_id)

    assert proxy.dropped == 2
    ids = [event.id for event in events]
    assert ids == list(range(1, len(ids) + 1)), "each event exactly once, in order"
    assert isinstance(events[-1], RunCompleted)
    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == ANSWER
    assert finished.status == "completed" and finished.result == ANSWER

    assert [last for last, _ in reconnects] == [5, 10]
    assert proxy.last_event_ids == [None, "5", "10"], "resumed after the last whole event"


def test_wait_survives_a_dropped_connection(
    proxy: DroppingProxy, api_key: str, slow_agent: str
) -> None:
    seen: list[int] = []
    with Client(proxy.url, api_key) as client:
        created = client.runs.create("Wait through it", agent_id=slow_agent)
        finished = client.runs.wait(
            created.run_id, timeout=60, on_event=lambda e: seen.append(e.id)
        )
    assert finished.status == "completed"
    assert seen == list(range(1, len(seen) + 1))
    assert proxy.dropped == 2


async def test_async_stream_resumes_after_a_dropped_connection(
    proxy: DroppingProxy, api_key: str, slow_agent: str
) -> None:
    async with AsyncClient(proxy.url, api_key) as client:
        created = await client.runs.create("Async and flaky", agent_id=slow_agent)
        events = [event async for event in client.runs.stream(created.run_id)]
    ids = [event.id for event in events]
    assert ids == list(range(1, len(ids) + 1))
    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == ANSWER
    assert proxy.last_event_ids == [None, "5", "10"]


def test_a_silent_connection_is_resumed_after_the_read_timeout(
    server: Server, api_key: str, slow_agent: str
) -> None:
    stalling = DroppingProxy(server.port, after=4, drops=1, stall=True)
    reconnects: list[tuple[int, str]] = []
    try:
        with Client(stalling.url, api_key, stream_read_timeout=1.0) as client:
            created = client.runs.create("Half-open connection", agent_id=slow_agent)
            events = list(
                client.runs.stream(
                    created.run_id,
                    on_reconnect=lambda last, error: reconnects.append(
                        (last, type(error).__name__)
                    ),
                )
            )
    finally:
        stalling.close()
    assert reconnects == [(4, "ReadTimeout")]
    assert stalling.last_event_ids == [None, "4"]
    ids = [event.id for event in events]
    assert ids == list(range(1, len(ids) + 1))
    assert "".join(e.text for e in events if isinstance(e, MessageDelta)) == ANSWER


def test_a_stream_that_never_gets_through_gives_up(
    server: Server, api_key: str, atrium: Client
) -> None:
    created = atrium.runs.create("Hopeless network")
    atrium.runs.wait(created.run_id, timeout=30)
    dropping = DroppingProxy(server.port, after=0, drops=100)
    received: list[int] = []
    try:
        with (
            Client(dropping.url, api_key, stream_reconnects=2) as client,
            pytest.raises(StreamError) as caught,
        ):
            for event in client.runs.stream(created.run_id):
                received.append(event.id)
    finally:
        dropping.close()
    assert received == [], "a torn first frame is never yielded"
    assert caught.value.run_id == created.run_id
    assert caught.value.last_event_id is None
    assert dropping.last_event_ids == [None, None, None], "one try and two reconnects"
