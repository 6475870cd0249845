"""`client.webhooks` and `runs.create(webhook_url=)` against a real server, sync and async; a
loopback receiver checks every signature with the `standardwebhooks` package."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from atrium.client import AsyncClient, Client, InvalidParameterError, NotFoundError
from tests.webhooks.receiver import Receiver, verify


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


def _wait(receiver: Receiver, path: str, count: int) -> None:
    deadline = time.monotonic() + 30
    while len(receiver.at(path)) < count:
        assert time.monotonic() < deadline, receiver.received
        time.sleep(0.02)


def test_webhooks_sync(atrium: Client, receiver: Receiver) -> None:
    hook = atrium.webhooks.create(receiver.url("/sync"), events=["run.completed"])
    assert hook.webhook_id.startswith("wh_") and hook.events == ["run.completed"]
    assert hook.secret is not None and hook.secret.startswith("whsec_")
    fetched = atrium.webhooks.get(hook.webhook_id)
    assert fetched.secret is None and fetched.url == hook.url
    assert [item.webhook_id for item in atrium.webhooks.list()] == [hook.webhook_id]

    run = atrium.runs.create("Say hello", webhook_url=receiver.url("/own"))
    assert run.webhook_secret is not None and run.webhook_secret != hook.secret
    done = atrium.runs.wait(run.run_id, timeout=30)
    assert done.status == "completed" and done.webhook_secret is None
    _wait(receiver, "/sync", 1)
    _wait(receiver, "/own", 1)
    (to_endpoint,) = receiver.at("/sync")
    (to_run,) = receiver.at("/own")
    assert verify(hook.secret, to_endpoint)["run_id"] == run.run_id
    assert verify(run.webhook_secret, to_run)["status"] == "completed"

    deadline = time.monotonic() + 10
    while True:
        mine = atrium.webhooks.deliveries(run_id=run.run_id)
        if len(mine) == 2 and all(item.status == "delivered" for item in mine):
            break
        assert time.monotonic() < deadline, mine
        time.sleep(0.05)
    assert {item.webhook_id for item in mine} == {hook.webhook_id, None}
    assert {item.delivery_id for item in mine} == {to_endpoint.webhook_id, to_run.webhook_id}
    (delivery,) = atrium.webhooks.deliveries(hook.webhook_id, limit=5)
    assert delivery.attempts == 1 and delivery.response_status == 200
    assert delivery.delivered_at is not None and delivery.next_attempt_at is None

    with pytest.raises(InvalidParameterError) as invalid:
        atrium.webhooks.create("ftp://hooks.example.test/")
    assert invalid.value.parameter == "url"
    with pytest.raises(InvalidParameterError) as invalid:
        atrium.webhooks.create(receiver.url(), events=["run.started"])
    assert invalid.value.parameter == "events"

    deleted = atrium.webhooks.delete(hook.webhook_id)
    assert deleted.webhook_id == hook.webhook_id and deleted.deleted
    with pytest.raises(NotFoundError):
        atrium.webhooks.get(hook.webhook_id)
    assert atrium.webhooks.list() == []


async def test_webhooks_async(async_atrium: AsyncClient, receiver: Receiver) -> None:
    hook = await async_atrium.webhooks.create(receiver.url("/async"))
    assert hook.secret is not None
    assert hook.events == ["run.completed", "run.failed", "run.cancelled"]
    assert (await async_atrium.webhooks.get(hook.webhook_id)).secret is None
    run = await async_atrium.runs.create("Say hello")
    await async_atrium.runs.wait(run.run_id, timeout=30)
    (item,) = await receiver.wait_for("/async", 1, within=30)
    assert verify(hook.secret, item)["run_id"] == run.run_id
    for _ in range(200):
        (delivery,) = await async_atrium.webhooks.deliveries(hook.webhook_id)
        if delivery.status == "delivered":
            break
        await asyncio.sleep(0.05)
    assert delivery.status == "delivered" and delivery.delivery_id == item.webhook_id
    assert [h.webhook_id for h in await async_atrium.webhooks.list()] == [hook.webhook_id]
    assert (await async_atrium.webhooks.delete(hook.webhook_id)).deleted
    with pytest.raises(NotFoundError):
        await async_atrium.webhooks.deliveries(hook.webhook_id)


def _delivered(atrium: Client, receiver: Receiver, count: int) -> set[str]:
    """`count` runs, each delivered to its own URL; their ids once every delivery is recorded."""
    runs = [
        atrium.runs.create(f"run {n}", webhook_url=receiver.url(f"/page-{n}")) for n in range(count)
    ]
    for run in runs:
        atrium.runs.wait(run.run_id, timeout=30)
    ids = {run.run_id for run in runs}
    deadline = time.monotonic() + 10
    while {
        d.run_id for d in atrium.webhooks.deliveries(limit=200) if d.status == "delivered"
    } != ids:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return ids


def test_iter_deliveries_follows_the_cursor(atrium: Client, receiver: Receiver) -> None:
    ids = _delivered(atrium, receiver, 5)
    assert len(atrium.webhooks.deliveries(limit=2)) == 2, "one page"
    walked = list(atrium.webhooks.iter_deliveries(limit=2))
    assert [d.run_id for d in walked if d.run_id in ids] == [d.run_id for d in walked]
    assert sorted(d.run_id for d in walked) == sorted(ids), "each once, across three pages"
    stamps = [d.created_at for d in walked]
    assert stamps == sorted(stamps, reverse=True)


async def test_async_iter_deliveries_follows_the_cursor(
    atrium: Client, async_atrium: AsyncClient, receiver: Receiver
) -> None:
    ids = await asyncio.to_thread(_delivered, atrium, receiver, 3)
    walked = [d.run_id async for d in async_atrium.webhooks.iter_deliveries(limit=1)]
    assert sorted(walked) == sorted(ids)
