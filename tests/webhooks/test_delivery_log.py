"""The delivery log: pages newest first with a cursor, and retention (delivered and failed
deliveries older than `webhook_retention_days` are deleted; pending ones, and younger ones,
stay)."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any, cast

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Table, update

from atrium.db.engine import Database
from atrium.db.models import WebhookDelivery
from atrium.kit.time import utcnow
from atrium.webhooks import sender
from tests.runs.helpers import create_run, wait_finished
from tests.runs.test_hostile_parameters import cursor_of
from tests.webhooks.conftest import FAST
from tests.webhooks.receiver import Receiver

DELIVERIES = "/v1/webhooks/deliveries"
_TABLE = cast(Table, WebhookDelivery.__table__)


async def _delivered_runs(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver, count: int
) -> list[str]:
    """`count` runs, each delivered once to its own webhook URL; their ids."""
    runs = [
        await create_run(client, auth, f"run {n}", webhook_url=receiver.url(f"/own-{n}"))
        for n in range(count)
    ]
    for run in runs:
        await wait_finished(client, auth, run["run_id"])
    for n in range(count):
        await receiver.wait_for(f"/own-{n}", 1)
    ids = [run["run_id"] for run in runs]
    for _ in range(200):  # the attempt is recorded just after the receiver answered
        listed = await _listed(client, auth)
        if all(listed.get(run_id) == "delivered" for run_id in ids):
            return ids
        await asyncio.sleep(0.05)
    raise AssertionError(listed)


async def _listed(client: httpx.AsyncClient, auth: dict[str, str]) -> dict[str, Any]:
    """run id -> its delivery's status, as the API lists them."""
    response = await client.get(DELIVERIES, headers=auth)
    assert response.status_code == 200, response.text
    return {item["run_id"]: item["status"] for item in response.json()["data"]}


async def _age(db: Database, run_id: str, *, days: float, **values: Any) -> None:
    async with db.transaction() as session:
        await session.execute(
            update(_TABLE)
            .where(_TABLE.c.run_id == run_id)
            .values(created_at=utcnow() - timedelta(days=days), **values)
        )


@pytest.mark.parametrize("settings_overrides", [{**FAST, "webhook_retention_days": 7}])
async def test_old_finished_deliveries_are_deleted_and_the_rest_kept(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    receiver: Receiver,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sender, "_PURGE_BATCH", 1)  # so the purge takes several batches
    old_delivered, old_failed, old_pending, young = await _delivered_runs(client, auth, receiver, 4)
    await _age(db, old_delivered, days=8)
    await _age(db, old_failed, days=30, status="failed", delivered_at=None)
    # Still owed (a retry far ahead): kept however old.
    far = utcnow() + timedelta(days=1)
    await _age(db, old_pending, days=30, status="pending", next_attempt_at=far)
    await _age(db, young, days=6)

    assert await app.state.workers.webhooks.purge_expired() == 2
    assert await _listed(client, auth) == {old_pending: "pending", young: "delivered"}
    assert await app.state.workers.webhooks.purge_expired() == 0


@pytest.mark.parametrize("settings_overrides", [{**FAST, "webhook_retention_days": 0}])
async def test_a_retention_of_zero_keeps_everything(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database, receiver: Receiver
) -> None:
    (run_id,) = await _delivered_runs(client, auth, receiver, 1)
    await _age(db, run_id, days=3650)
    assert await app.state.workers.webhooks.purge_expired() == 0
    assert await _listed(client, auth) == {run_id: "delivered"}


async def test_the_log_pages_newest_first_with_a_cursor(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver
) -> None:
    made = await _delivered_runs(client, auth, receiver, 5)
    seen: list[tuple[str, str]] = []  # (created_at, run id) in the order listed
    cursor: str | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        response = await client.get(DELIVERIES, params=params, headers=auth)
        assert response.status_code == 200, response.text
        page = response.json()
        pages += 1
        seen += [(item["created_at"], item["run_id"]) for item in page["data"]]
        assert page["has_more"] == (page["next_cursor"] is not None)
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert pages == 3
    assert sorted(run_id for _, run_id in seen) == sorted(made), "each delivery once"
    # Newest first (the timestamps' fixed format sorts as text; runs may finish in any order).
    stamps = [created_at for created_at, _ in seen]
    assert stamps == sorted(stamps, reverse=True)


@pytest.mark.parametrize(
    "cursor",
    [
        "not-a-cursor",
        "bm9waXBl",
        "x" * 201,
        cursor_of("9" * 17, "msg_abc"),  # past `datetime`'s range
        cursor_of("1767225600000000", "msg_a\x00b"),  # NUL: PostgreSQL refuses it
    ],
)
async def test_a_cursor_this_api_did_not_return_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], cursor: str
) -> None:
    response = await client.get(DELIVERIES, params={"cursor": cursor}, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER" and error["details"]["parameter"] == "cursor"
