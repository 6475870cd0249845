"""Deliveries to a real receiver on loopback: every finished run exactly once per endpoint,
signed (checked with the independent `standardwebhooks` package), the payload being the run as
`GET /agent/runs/{id}` shows it; retries with backoff; the outbox written with the run's end."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any, cast

import httpx
import pytest
from fastapi import FastAPI
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import Table, func, select, update

from atrium.db.engine import Database
from atrium.db.models import Run, WebhookDelivery
from atrium.kit.time import utcnow
from atrium.runs import lifecycle
from atrium.runs.lifecycle import ClaimedRun
from atrium.runtime.llm_models import ModelRegistry
from atrium.worker.execution import RunExecution
from atrium.worker.recorder import RunRecorder
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.webhooks.conftest import FAST
from tests.webhooks.receiver import Receiver, verify

HOOKS = "/v1/webhooks"


async def _stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "thinking"
    await asyncio.sleep(60)
    yield " never"


async def _fails(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    raise RuntimeError("the model broke")
    yield ""  # an async generator, as FunctionModel's stream function must be


async def _hook(
    client: httpx.AsyncClient, auth: dict[str, str], url: str, events: list[str] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"url": url} if events is None else {"url": url, "events": events}
    response = await client.post(HOOKS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    hook: dict[str, Any] = response.json()
    return hook


async def _deliveries_of_run(db: Database, run_id: str) -> int:
    async with db.session(write=False) as session:
        found = await session.scalar(
            select(func.count())
            .select_from(WebhookDelivery)
            .where(WebhookDelivery.run_id == run_id)
        )
    return int(found or 0)


async def _wait_delivery(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, status: str, within: float = 20
) -> list[dict[str, Any]]:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        response = await client.get(f"{HOOKS}/deliveries", params={"run_id": run_id}, headers=auth)
        assert response.status_code == 200, response.text
        found: list[dict[str, Any]] = response.json()["data"]
        if found and all(item["status"] == status for item in found):
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.05)


async def _wait_running(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> None:
    headers = {**auth, "Accept": "application/json"}
    for _ in range(1000):
        events = (await client.get(f"{RUNS}/{run_id}/events", headers=headers)).json()["data"]
        if any(event["event"] == "message.delta" for event in events):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the run never started talking")


async def test_every_finished_run_is_delivered_once_per_endpoint_signed(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    receiver: Receiver,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    everything = await _hook(client, auth, receiver.url("/all"))
    failures = await _hook(client, auth, receiver.url("/failures"), ["run.failed"])
    secrets = {"/all": everything["secret"], "/failures": failures["secret"]}

    completed = await create_run(client, auth, "Say hello")
    # A model that errors (an unknown provider is a 400 at creation now, not a failed run).
    models.register("test:fails", FunctionModel(stream_function=_fails))
    failing_agent = await make_agent(model="test:fails")
    failed = await create_run(client, auth, "fail", agent_id=failing_agent)
    models.register("test:stalls", FunctionModel(stream_function=_stalls))
    stalling_agent = await make_agent(model="test:stalls")
    running = await create_run(client, auth, "stall", agent_id=stalling_agent)
    await _wait_running(client, auth, running["run_id"])
    # Queued behind the stalled run of the same thread: cancelled before any worker starts it.
    queued = await create_run(
        client, auth, "wait", agent_id=stalling_agent, thread_id=running["thread_id"]
    )
    assert await _deliveries_of_run(db, running["run_id"]) == 0
    assert await _deliveries_of_run(db, queued["run_id"]) == 0
    cancelled = await client.post(f"{RUNS}/{queued['run_id']}/cancel", headers=auth)
    assert cancelled.json()["status"] == "cancelled"
    await client.post(f"{RUNS}/{running['run_id']}/cancel", headers=auth)

    expected = {
        completed["run_id"]: "run.completed",
        failed["run_id"]: "run.failed",
        queued["run_id"]: "run.cancelled",
        running["run_id"]: "run.cancelled",
    }
    finished = {run_id: await wait_finished(client, auth, run_id) for run_id in expected}
    assert {run_id: run["status"] for run_id, run in finished.items()} == {
        run_id: event.removeprefix("run.") for run_id, event in expected.items()
    }
    all_received = await receiver.wait_for("/all", 4)
    failures_received = await receiver.wait_for("/failures", 1)
    await asyncio.sleep(0.5)  # long enough for a duplicate to show up
    assert len(receiver.at("/all")) == 4 and len(receiver.at("/failures")) == 1

    by_run: dict[str, Any] = {}
    for item in all_received:
        payload = verify(secrets["/all"], item)
        assert item.headers["content-type"] == "application/json"
        assert item.headers["user-agent"] == "atrium-webhooks"
        assert item.headers["webhook-signature"].startswith("v1,")
        by_run[payload["run_id"]] = (item, payload)
    assert set(by_run) == set(expected)
    for run_id, (_item, payload) in by_run.items():
        # The payload is the run exactly as GET /agent/runs/{id} returns it.
        assert payload == (await client.get(f"{RUNS}/{run_id}", headers=auth)).json()
        assert payload["status"] == expected[run_id].removeprefix("run.")
    assert verify(secrets["/failures"], failures_received[0])["run_id"] == failed["run_id"]
    # One delivery per endpoint and run, each with its own stable id (the webhook-id).
    ids = [item.webhook_id for item in [*all_received, *failures_received]]
    assert len(set(ids)) == 5 and all(webhook_id.startswith("msg_") for webhook_id in ids)
    for run_id, event in expected.items():
        assert await _deliveries_of_run(db, run_id) == (2 if event == "run.failed" else 1)

    listed = await client.get(f"{HOOKS}/{everything['webhook_id']}/deliveries", headers=auth)
    rows = listed.json()["data"]
    assert len(rows) == 4
    assert {row["delivery_id"] for row in rows} == {item.webhook_id for item in all_received}
    for row in rows:
        assert row["status"] == "delivered" and row["attempts"] == 1
        assert row["response_status"] == 200 and row["response_body"] == "ok"
        assert row["next_attempt_at"] is None and row["delivered_at"] is not None
        assert row["webhook_id"] == everything["webhook_id"]
        assert row["event"] == expected[row["run_id"]]
    created = [row["created_at"] for row in rows]
    assert created == sorted(created, reverse=True)  # newest first
    limited = await client.get(
        f"{HOOKS}/{everything['webhook_id']}/deliveries", params={"limit": 2}, headers=auth
    )
    assert [row["delivery_id"] for row in limited.json()["data"]] == [
        row["delivery_id"] for row in rows[:2]
    ]


async def test_a_runs_own_webhook_url_is_signed_with_its_own_secret(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver
) -> None:
    endpoint = await _hook(client, auth, receiver.url("/account"))
    headers = {**auth, "Idempotency-Key": "with-a-hook"}
    body = {"prompt": "Say hello", "webhook_url": receiver.url("/mine")}
    response = await client.post(RUNS, json=body, headers=headers)
    assert response.status_code == 201, response.text
    run = response.json()
    secret = run["webhook_secret"]
    assert secret.startswith("whsec_") and secret != endpoint["secret"]
    # The idempotent replay is the same response, secret included; GET never shows it.
    replay = await client.post(RUNS, json=body, headers=headers)
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["webhook_secret"] == secret
    done = await wait_finished(client, auth, run["run_id"])
    assert "webhook_secret" not in done and "webhook_url" not in done

    (mine,) = await receiver.wait_for("/mine", 1)
    assert verify(secret, mine) == done
    with pytest.raises(Exception, match="signature"):
        verify(endpoint["secret"], mine)
    (account,) = await receiver.wait_for("/account", 1)
    assert verify(endpoint["secret"], account) == done
    assert mine.webhook_id != account.webhook_id

    rows = await _wait_delivery(client, auth, run["run_id"], "delivered")
    assert {row["webhook_id"] for row in rows} == {None, endpoint["webhook_id"]}
    # Listed under the endpoint: only its own deliveries.
    own = await client.get(f"{HOOKS}/{endpoint['webhook_id']}/deliveries", headers=auth)
    assert [row["delivery_id"] for row in own.json()["data"]] == [account.webhook_id]


@pytest.mark.parametrize(
    "settings_overrides", [{**FAST, "webhook_max_attempts": 6, "webhook_backoff_seconds": 0.2}]
)
async def test_a_receiver_failing_three_times_gets_it_on_the_fourth_attempt(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="atrium.webhooks")
    hook = await _hook(client, auth, receiver.url("/flaky"))
    receiver.script["/flaky"] = [500, ("redirect", receiver.url("/elsewhere")), ("sleep", 1.5)]
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])

    (first,) = await receiver.wait_for("/flaky", 1)
    # After the first failure: pending, the response recorded, the next attempt scheduled.
    deliveries = f"{HOOKS}/{hook['webhook_id']}/deliveries"
    for _ in range(200):
        (row,) = (await client.get(deliveries, headers=auth)).json()["data"]
        if row["attempts"] >= 1:
            break
        await asyncio.sleep(0.01)
    if row["attempts"] == 1:
        assert row["status"] == "pending" and row["response_status"] == 500
        assert row["response_body"].startswith("receiver says no")
        assert len(row["response_body"]) == 1024  # truncated
        assert row["next_attempt_at"] is not None and row["error"] == "HTTP 500"

    received = await receiver.wait_for("/flaky", 4)
    (row,) = await _wait_delivery(client, auth, run["run_id"], "delivered")
    assert row["attempts"] == 4 and row["response_status"] == 200
    assert row["error"] is None and row["next_attempt_at"] is None
    # The same message each time: same id, same bytes, each attempt freshly signed.
    assert {item.webhook_id for item in received} == {first.webhook_id}
    assert {item.body for item in received} == {first.body}
    for item in received:
        verify(hook["secret"], item)
    assert receiver.at("/elsewhere") == []  # the redirect was not followed
    await asyncio.sleep(0.5)
    assert len(receiver.at("/flaky")) == 4
    # One INFO line per attempt: status, the response body cut short; never the secret.
    lines = [
        record.getMessage()
        for record in caplog.records
        if record.name == "atrium.webhooks" and first.webhook_id in record.getMessage()
    ]
    assert [line.split(" attempt ")[1][:1] for line in lines] == ["1", "2", "3", "4"]
    assert ": 500 receiver says no" in lines[0] and len(lines[0]) < 400
    assert lines[1].endswith(": 302 ") and "timed out" in lines[2] and ": 200 ok" in lines[3]
    assert all(hook["secret"] not in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize("settings_overrides", [{**FAST, "webhook_max_attempts": 3}])
async def test_a_receiver_that_always_fails_ends_failed(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver
) -> None:
    hook = await _hook(client, auth, receiver.url("/down"))
    receiver.script["/down"] = [503] * 10
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    (row,) = await _wait_delivery(client, auth, run["run_id"], "failed")
    assert row["attempts"] == 3 and row["response_status"] == 503
    assert row["next_attempt_at"] is None and row["delivered_at"] is None
    await asyncio.sleep(0.5)
    assert len(receiver.at("/down")) == 3
    assert (await client.get(HOOKS, headers=auth)).json()["data"][0]["webhook_id"] == hook[
        "webhook_id"
    ]


async def test_a_deleted_endpoint_gets_nothing_more(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver, db: Database
) -> None:
    hook = await _hook(client, auth, receiver.url("/gone"))
    # Its receiver fails, so a delivery is still pending when the endpoint is deleted.
    receiver.script["/gone"] = [500] * 100
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    await receiver.wait_for("/gone", 1)
    deleted = await client.delete(f"{HOOKS}/{hook['webhook_id']}", headers=auth)
    assert deleted.status_code == 200
    assert await _deliveries_of_run(db, run["run_id"]) == 0
    seen = len(receiver.at("/gone"))
    later = await create_run(client, auth)
    await wait_finished(client, auth, later["run_id"])
    await asyncio.sleep(0.6)
    assert len(receiver.at("/gone")) <= seen + 1  # at most an attempt already in flight
    assert await _deliveries_of_run(db, later["run_id"]) == 0


@pytest.mark.parametrize("settings_overrides", [{**FAST, "run_worker": False}])
async def test_the_delivery_is_written_with_the_terminal_state(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, receiver: Receiver
) -> None:
    """No worker here: a queued run has no delivery; cancelling it writes one in the same
    transaction, which waits in the outbox for a worker to send it."""
    await _hook(client, auth, receiver.url("/later"))
    run = await create_run(client, auth)
    assert await _deliveries_of_run(db, run["run_id"]) == 0
    response = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert response.json()["status"] == "cancelled"
    assert await _deliveries_of_run(db, run["run_id"]) == 1
    (row,) = (
        await client.get(f"{HOOKS}/deliveries", params={"run_id": run["run_id"]}, headers=auth)
    ).json()["data"]
    assert row["status"] == "pending" and row["attempts"] == 0
    assert row["event"] == "run.cancelled" and row["next_attempt_at"] is not None
    await asyncio.sleep(0.3)
    assert receiver.received == []  # no worker in this process: nothing sends


async def _claimed_by_a_stalled_worker(db: Database, run_id: str, *, owner: str) -> ClaimedRun:
    """Put a finished run back as if `owner` had claimed it again and then stopped renewing
    its lease: queued, its deliveries gone, claimed by `owner`, the lease already expired."""
    runs = cast(Table, Run.__table__)
    async with db.transaction() as session:
        await session.execute(
            update(runs).where(runs.c.id == run_id).values(status="queued", finished_at=None)
        )
        await session.execute(
            WebhookDelivery.__table__.delete().where(WebhookDelivery.run_id == run_id)
        )
        (claimed,) = await session.run_sync(
            lambda sync: lifecycle.claim(
                sync, owner=owner, limit=1, lease_seconds=30, lock_rows=not db.sqlite
            )
        )
        await session.execute(
            update(runs).where(runs.c.id == run_id).values(lease_expires_at=utcnow())
        )
    return claimed


async def test_a_run_re_executed_after_its_lease_expired_is_delivered_once(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database, receiver: Receiver
) -> None:
    """A stale worker (its lease expired, the run re-queued and finished elsewhere) finishing
    late writes nothing: no second terminal state, so no second delivery."""
    hook = await _hook(client, auth, receiver.url("/once"))
    pool = app.state.workers
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    await receiver.wait_for("/once", 1)
    # Replay the race: a ghost worker claimed the run and stalled past its lease; the real pool
    # recovers and finishes it, then the ghost finishes too.
    receiver.received.clear()
    ghost = await _claimed_by_a_stalled_worker(db, run["run_id"], owner="ghost")
    await pool.recover_expired()  # or the pool's own recovery loop, whichever comes first
    await _wait_delivery(client, auth, run["run_id"], "delivered")
    recorder = RunRecorder(
        db=db,
        batcher=pool.batcher,
        broker=pool.broker,
        settings=pool.settings,
        claim=ghost,
        owner="ghost",
    )
    stale = RunExecution(recorder=recorder, runtime=pool.runtime)
    await stale.run()
    assert stale.recorder.lost
    await asyncio.sleep(0.5)
    assert await _deliveries_of_run(db, run["run_id"]) == 1
    assert len(receiver.at("/once")) == 1
    verify(hook["secret"], receiver.at("/once")[0])


@pytest.mark.parametrize("settings_overrides", [{**FAST, "run_max_attempts": 2}])
async def test_a_run_failed_by_recovery_is_delivered(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database, receiver: Receiver
) -> None:
    """WORKER_LOST: the recovery that fails a run whose worker vanished records its delivery."""
    hook = await _hook(client, auth, receiver.url("/lost"), ["run.failed"])
    run = await create_run(client, auth, webhook_url=receiver.url("/lost-own"))
    await wait_finished(client, auth, run["run_id"])
    await receiver.wait_for("/lost-own", 1)
    # As if a worker claimed the run for its second (last) attempt and died.
    receiver.received.clear()
    await _claimed_by_a_stalled_worker(db, run["run_id"], owner="dead")
    await app.state.workers.recover_expired()  # or the pool's own recovery loop
    (to_endpoint,) = await receiver.wait_for("/lost", 1)
    (to_run,) = await receiver.wait_for("/lost-own", 1)
    failed = verify(hook["secret"], to_endpoint)
    assert failed["status"] == "failed" and failed["error"]["code"] == "WORKER_LOST"
    assert verify(run["webhook_secret"], to_run) == failed
    assert failed == (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()
