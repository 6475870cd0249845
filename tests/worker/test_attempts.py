"""A run claimed again by the same process: only the newest attempt's writes land.

A worker process whose event loop stalls past a lease can see its own run re-queued and then
claim it again: both executions have the same lease owner (the process), so the conditional
writes also check the attempt, and the earlier execution writes nothing.
"""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.kit.time import utcnow
from atrium.runs import lifecycle
from atrium.runs.lifecycle import run_queue
from tests.runs.helpers import RUNS, create_run

OWNER = "host:1234:abcd"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"run_worker": False}  # this test is the worker


async def _claim(db: Database) -> lifecycle.ClaimedRun:
    (claimed,) = await db.write_sync(
        lambda session: lifecycle.claim(
            session, owner=OWNER, limit=1, lease_seconds=30, lock_rows=not db.sqlite
        )
    )
    return claimed


async def test_only_the_newest_attempt_of_one_owner_writes(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    run = await create_run(client, auth, "claimed twice")
    first = await _claim(db)
    # Its lease runs out (the loop stalled) and recovery puts the run back in the queue.
    later = utcnow() + timedelta(seconds=60)

    def requeue(session: Session) -> tuple[int, str] | None:
        seq = run_queue.requeue(session, run_id=first.run_id, owner=OWNER, expired_before=later)
        run_queue.release_thread(session, thread_id=first.thread_id, run_id=first.run_id)
        return seq

    assert await db.write_sync(requeue) is not None
    second = await _claim(db)
    assert (first.run_id, first.attempt + 1) == (second.run_id, second.attempt)

    async def checkpoint_of(claim: lifecycle.ClaimedRun) -> bool | None:
        return await db.write_sync(
            lambda session: run_queue.checkpoint(
                session,
                run_id=claim.run_id,
                owner=OWNER,
                attempt=claim.attempt,
                last_event_seq=claim.last_event_seq,
                lease_seconds=30,
                event_rows=[],
            )
        )

    async def finish_of(claim: lifecycle.ClaimedRun, result: str) -> bool:
        values = {"status": "completed", "result": result, "finished_at": utcnow()}
        finished = await db.write_sync(
            lambda session: run_queue.finish(
                session,
                run_id=claim.run_id,
                account_id=claim.account_id,
                owner=OWNER,
                attempt=claim.attempt,
                values=values,
            )
        )
        return finished is not None

    assert await checkpoint_of(first) is None  # lost: nothing written
    assert await finish_of(first, "stale") is False
    assert await checkpoint_of(second) is False  # held, no cancel requested
    assert await finish_of(second, "fresh") is True

    shown = (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()
    assert (shown["status"], shown["result"]) == ("completed", "fresh")
