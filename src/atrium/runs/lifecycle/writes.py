"""The lifecycle's writes that are not a request's, each a named function of the database.

Each submits one synchronous transaction step of `moves` (or of `run_queue`) where it belongs:
through the process's write batcher for the hot path (a create, a claim, a lease renewal: group
commit), or in a transaction of its own (`Database.write_sync`) for recovery, which also runs
after the batcher stopped (a stopping worker hands its runs back). Callers name the write; the
way to the database is chosen here (docs/architecture.md, "Three ways to touch the database").
The batcher queues a write when its caller first awaits, so writes still commit in the order
they were made.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from sqlalchemy.orm import Session

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.runs.events.shapes import EventRow
from atrium.runs.lifecycle import busy_threads, moves, run_queue
from atrium.runs.lifecycle.busy_threads import Admission, IfBusy
from atrium.runs.lifecycle.moves import Announcement, ClaimedRun, Ending, Waiting
from atrium.runs.lifecycle.run_queue import ExpiredRun
from atrium.runs.lifecycle.waiting_runs import ExpiredWait
from atrium.runs.repository import NewRun, NewThread


async def create_run(
    writer: WriteBatcher, *, thread: NewThread | None, run: NewRun, now: datetime
) -> Announcement:
    """Batcher: the new run queued (`moves.create`)."""
    return await writer.write_sync(
        lambda session: moves.create(session, thread=thread, run=run, now=now)
    )


async def admit_run(db: Database, *, run: NewRun, policy: IfBusy) -> Admission:
    """Own transaction: a run for an existing thread, queued as `policy` says when the thread
    is busy (`busy_threads.admit`). Not the batcher's: the decision may wait for another
    process's on the same thread, and must not hold a batch of others' writes meanwhile."""
    return await db.write_sync(lambda session: busy_threads.admit(session, run=run, policy=policy))


async def claim_runs(
    writer: WriteBatcher, *, owner: str, limit: int, lease_seconds: float, lock_rows: bool
) -> list[ClaimedRun]:
    """Batcher: up to `limit` queued runs, now running under `owner`'s lease (`moves.claim`)."""
    return await writer.write_sync(
        lambda session: moves.claim(
            session, owner=owner, limit=limit, lease_seconds=lease_seconds, lock_rows=lock_rows
        )
    )


async def renew_leases(
    writer: WriteBatcher, *, owner: str, run_ids: Sequence[str], lease_seconds: float
) -> dict[str, bool]:
    """Batcher: each run whose lease `owner` still holds, with its cancel flag."""
    return await writer.write_sync(
        lambda session: run_queue.renew_leases(
            session, owner=owner, run_ids=run_ids, lease_seconds=lease_seconds
        )
    )


async def requeue(
    db: Database, *, run_id: str, owner: str | None, expired_before: datetime | None, reason: str
) -> Announcement | None:
    """Own transaction (the batcher may have stopped): the run queued again (`moves.requeue`)."""
    return await db.write_sync(
        lambda session: moves.requeue(
            session, run_id=run_id, owner=owner, expired_before=expired_before, reason=reason
        )
    )


async def fail_lost(db: Database, *, run: ExpiredRun, now: datetime) -> Announcement | None:
    """Own transaction: a run lost on its last attempt, failed (`moves.fail_lost`)."""
    return await db.write_sync(lambda session: moves.fail_lost(session, run=run, now=now))


async def park(
    writer: WriteBatcher,
    *,
    run: ClaimedRun,
    owner: str,
    waiting: Waiting,
    rows: list[EventRow],
    payload: Callable[[Session], str],
    now: datetime,
) -> Announcement | None:
    """Batcher: the run waits for its caller (`moves.wait`)."""
    return await writer.write_sync(
        lambda session: moves.wait(
            session, run=run, owner=owner, waiting=waiting, rows=rows, payload=payload, now=now
        )
    )


async def expire_wait(
    db: Database, *, run: ExpiredWait, ending: Ending, now: datetime
) -> Announcement | None:
    """Own transaction: a wait nobody answered in time, ended (`moves.end_wait`)."""
    return await db.write_sync(
        lambda session: moves.end_wait(session, run=run, ending=ending, waits=run.waits, now=now)
    )


async def finish(
    writer: WriteBatcher,
    *,
    run: ClaimedRun,
    owner: str,
    ending: Ending,
    rows: list[EventRow],
    now: datetime,
) -> Announcement | None:
    """Batcher: the run ended as `ending` says, while `owner` holds its lease (`moves.finish`)."""
    return await writer.write_sync(
        lambda session: moves.finish(
            session, run=run, owner=owner, ending=ending, rows=rows, now=now
        )
    )
