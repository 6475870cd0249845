"""A new prompt for a busy thread (`if_busy` on `POST /agent/runs`, docs/guide/threads.md).

A thread is busy while it has an unfinished run: queued, running or waiting for its caller.
`enqueue` queues the new run behind them (a create like any other: `moves.create`). The other
policies decide in one transaction of their own, which reads the thread's unfinished runs and
writes the outcome together, so two prompts racing on one thread (in two API processes) are
decided one after the other:

- `reject`: nothing is written; the caller is told the thread is busy.
- `interrupt` / `rollback`: every unfinished run of the thread is cancelled through the
  lifecycle's own moves (`end_wait` for a waiting run, `cancel_queued` for a queued one,
  `flag_cancel` for a running one, which its worker ends at its next step), with that reason;
  then the new run is queued. The claim starts it once the cancelled runs released the thread.
  An interrupted run's messages so far stay in the thread's history, a rolled back one's do not
  (`run_queue.IN_HISTORY`).

On PostgreSQL the transaction first takes a transaction-scoped advisory lock keyed by the
thread: a row lock on the thread would be taken in the opposite order to the claim's (run rows,
then the thread) and could deadlock with it. SQLite's writes are serialized already
(docs/decisions/0047-busy-threads.md).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Final

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from atrium.db.models import TERMINAL_STATUSES, CancelReason, Run, RunStatus
from atrium.kit.time import utcnow
from atrium.runs.lifecycle import moves
from atrium.runs.lifecycle.moves import Announcement, Ending, Usage
from atrium.runs.lifecycle.run_queue import from_states
from atrium.runs.repository import NewRun


class IfBusy(StrEnum):
    """What a new prompt does when its thread has an unfinished run."""

    ENQUEUE = "enqueue"
    REJECT = "reject"
    INTERRUPT = "interrupt"
    ROLLBACK = "rollback"


# A thread with a run in one of these is busy.
UNFINISHED: Final = tuple(status for status in RunStatus if status not in TERMINAL_STATUSES)
# A run moves on while the decision is made (answered, claimed, waiting again); each round
# tries the cancel of every status in the order a run goes through them.
_ROUNDS = 3


@dataclass(frozen=True, slots=True)
class UnfinishedRun:
    """An unfinished run of the thread: what its cancel writes (its ending, usage, webhook)."""

    run_id: str
    account_id: int
    agent_id: str
    webhook_url: str | None
    waits: int
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int
    credits_micro: int


@dataclass(frozen=True, slots=True)
class Admission:
    """The decision: the new run as stored (None: rejected, nothing written) and what to
    announce once it commits (the cancels, then the creation)."""

    run: NewRun | None
    announcements: list[Announcement]


def lock_thread(session: Session, *, thread_id: str) -> None:
    """PostgreSQL: wait for the other decisions on this thread to commit (the lock ends with
    the transaction). 63 bits of the thread id's SHA-256: the lock's key is a bigint."""
    if session.get_bind().dialect.name != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(thread_id.encode()).digest()[:8], "big", signed=True)
    session.execute(select(func.pg_advisory_xact_lock(key)))


def unfinished_runs(session: Session, *, thread_id: str) -> list[UnfinishedRun]:
    """The thread's queued, running and waiting runs, oldest first."""
    rows = session.execute(
        select(
            Run.id.label("run_id"),
            Run.account_id,
            Run.agent_id,
            Run.webhook_url,
            Run.waits,
            Run.input_tokens,
            Run.output_tokens,
            Run.requests,
            Run.tool_calls,
            Run.credits_micro,
        )
        .where(Run.thread_id == thread_id, from_states(Run.status, UNFINISHED))
        .order_by(Run.created_at, Run.id)
    )
    return [UnfinishedRun(**row._asdict()) for row in rows.all()]


def admit(session: Session, *, run: NewRun, policy: IfBusy) -> Admission:
    """Queue `run` in its (existing) thread as `policy` says when the thread is busy."""
    lock_thread(session, thread_id=run.thread_id)
    # Stamped once the lock is held: later than every run it may find (an interrupted run's
    # messages are history for the runs created after it).
    now = max(run.created_at, utcnow())
    run = replace(run, created_at=now)
    earlier = unfinished_runs(session, thread_id=run.thread_id)
    if earlier and policy == IfBusy.REJECT:
        return Admission(None, [])
    announcements: list[Announcement] = []
    if policy in (IfBusy.INTERRUPT, IfBusy.ROLLBACK):
        reason = CancelReason(policy.value)
        for each in earlier:
            announcement = stop_run(session, run=each, reason=reason, now=now)
            if announcement is not None:
                announcements.append(announcement)
    announcements.append(moves.create(session, thread=None, run=run, now=now))
    return Admission(run, announcements)


def stop_run(
    session: Session, *, run: UnfinishedRun, reason: CancelReason, now: datetime
) -> Announcement | None:
    """Cancel `run` by the move its status takes (a waiting run billed what it used before its
    wait, its messages kept); None when it finished meanwhile."""
    ending = Ending(RunStatus.CANCELLED, usage=Usage.of(run), cancel_reason=reason)
    for _ in range(_ROUNDS):
        announcement = (
            moves.end_wait(session, run=run, ending=ending, waits=run.waits, now=now)
            or moves.cancel_queued(session, run=run, now=now, reason=reason)
            or moves.flag_cancel(session, run_id=run.run_id, reason=reason)
        )
        if announcement is not None:
            return announcement
    return None
