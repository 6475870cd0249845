"""SQL of the run queue: the claim, the lease a worker holds while it runs a run, and the
updates that take a run out of the queue or put it back (finish, fail, re-queue, cancel).

The writes are synchronous functions of a `Session`: the write batcher (or, for the rare ones,
`Database.write_sync`) runs each transaction whole in SQLite's writer thread;
`atrium.runs.lifecycle` is what calls the ones that change a run's status.

Every write a worker makes for a run is conditional on still holding its lease (`lease_owner`
and `status = 'running'`). A worker that lost its lease (it stalled past the lease, the run was
re-queued and claimed elsewhere) therefore writes nothing: no second result, artifact or usage.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    or_,
    select,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, aliased

from atrium.agents.config import AgentConfig
from atrium.db.batcher import Together
from atrium.db.models import (
    Artifact,
    CancelReason,
    Run,
    RunAction,
    RunStatus,
    Thread,
    WebhookEndpoint,
)
from atrium.kit.time import utcnow
from atrium.runs.events import event_store
from atrium.runs.events.shapes import EventRow
from atrium.runs.lifecycle.transitions import (
    CANCEL_QUEUED,
    CLAIM,
    FAIL_LOST,
    FINISH,
    LEASED,
    REQUEST_CANCEL,
    REQUEUE,
)
from atrium.runs.run_columns import RunColumns

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Shape = TypeVar("Shape", bound="DataclassInstance")

# The hot statements use the tables, not the mapped classes: an ORM-enabled INSERT/UPDATE goes
# through SQLAlchemy's bulk-persistence layer, which costs about 0.15 ms of CPU per statement
# more than the same Core statement (no ORM objects are involved either way). They run on the
# session's connection (`session.connection().execute`), not `session.execute`, whose own layer
# (ORM execute hooks, autoflush of objects these transactions never add) adds a quarter to each
# of the fifteen or so statements of a run
# (docs/decisions/0005-core-statements-in-the-queue-repository.md).
_RUNS = cast(Table, Run.__table__)
_THREADS = cast(Table, Thread.__table__)
_ENDPOINTS = cast(Table, WebhookEndpoint.__table__)


def from_states(column: Any, statuses: Sequence[RunStatus]) -> ColumnElement[bool]:
    """`column` (a run's status) is one of `statuses`, a move's `sources`: the one condition a
    conditional UPDATE puts on the status. An equality for one status: the statement is the
    same as a literal's (an IN of bound values is expanded at every execution)."""
    if len(statuses) == 1:
        return cast(ColumnElement[bool], column == statuses[0])
    return cast(ColumnElement[bool], column.in_(statuses))


# The runs whose messages are part of their thread's history: the completed ones, and those a
# later prompt of the thread interrupted (`if_busy: "interrupt"`), with what they produced before
# it. The one place that says so: the claim's history read, and anything showing a thread's
# conversation, take it from here.
IN_HISTORY: Final = or_(
    _RUNS.c.status == RunStatus.COMPLETED,
    and_(
        _RUNS.c.status == RunStatus.CANCELLED,
        _RUNS.c.cancel_reason == CancelReason.INTERRUPT,
    ),
)

# The statements of every run are built once, with bound parameters, and executed with each
# run's values: building an UPDATE and computing its cache key costs several times more CPU
# than executing it on SQLite, and a run makes about a dozen.
# The thread's runs in its history other than this one: what its history is read from.
_OTHER_COMPLETED_IN_THREAD = (
    _RUNS.c.thread_id == bindparam("b_thread_id"),
    IN_HISTORY,
    _RUNS.c.id != bindparam("b_run_id"),
)
# With whether the thread has a history (a run in it besides this one, or a fork's base): most
# runs start a thread of their own, and their claim then skips the history read
# (`thread_history`): a statement per run
# (docs/decisions/0013-batched-checkpoints-and-event-inserts.md).
# Bound parameters, not a correlated subquery: SQLAlchemy writes SQLite's RETURNING columns
# without their table's name, and the subquery's own table would then shadow the outer one.
_EARLIER_RUNS = select(_RUNS.c.id).where(*_OTHER_COMPLETED_IN_THREAD).exists()
_TAKE_THREAD = (
    update(_THREADS)
    .where(_THREADS.c.id == bindparam("b_thread_id"), _THREADS.c.active_run_id.is_(None))
    .values(active_run_id=bindparam("b_run_id"))
    .returning(_THREADS.c.id, or_(_EARLIER_RUNS, _THREADS.c.base_messages.is_not(None)))
)
_RELEASE_THREAD = (
    update(_THREADS)
    .where(
        _THREADS.c.id == bindparam("b_thread_id"), _THREADS.c.active_run_id == bindparam("b_run_id")
    )
    .values(active_run_id=None)
)
_START_RUN = (
    update(_RUNS)
    .where(_RUNS.c.id == bindparam("b_run_id"), from_states(_RUNS.c.status, CLAIM.sources))
    .values(
        status=CLAIM.target,
        attempts=_RUNS.c.attempts + 1,
        lease_owner=bindparam("b_owner"),
        lease_expires_at=bindparam("b_lease_expires_at"),
        started_at=func.coalesce(
            _RUNS.c.started_at, bindparam("b_now", type_=_RUNS.c.started_at.type)
        ),
        # `attempts` on the right is the row's value until this update: 0 on the first attempt.
        last_event_seq=_RUNS.c.last_event_seq + case((_RUNS.c.attempts > 0, 2), else_=1),
    )
    .returning(
        _RUNS.c.account_id,
        _RUNS.c.agent_id,
        _RUNS.c.model,
        _RUNS.c.prompt,
        _RUNS.c.agent_config,
        _RUNS.c.attempts,
        _RUNS.c.last_event_seq,
        _RUNS.c.created_at,
        _RUNS.c.cancel_requested,
        _RUNS.c.webhook_url,
        _RUNS.c.waits,
    )
)
# Held: still running under this owner's lease, and on this attempt. The attempt matters when
# one process claims a run again after its own lease of it expired (a stalled event loop): the
# owner is the same, and only the attempt tells the stale execution from the new one.
_HELD = and_(
    _RUNS.c.id == bindparam("b_run_id"),
    _RUNS.c.lease_owner == bindparam("b_owner"),
    _RUNS.c.attempts == bindparam("b_attempt"),
)
_CHECKPOINT = (
    update(_RUNS)
    .where(_HELD, from_states(_RUNS.c.status, LEASED))
    .values(
        last_event_seq=bindparam("b_last_event_seq"),
        lease_expires_at=bindparam("b_lease_expires_at"),
    )
    .returning(_RUNS.c.cancel_requested)
)


# Whether the run's account has a webhook endpoint, read by the terminal UPDATE itself: the
# outbox then reads the endpoints only when there are some (a statement per run otherwise).
# A bound parameter, not correlated: see `_EARLIER_RUNS`.
_HAS_ENDPOINTS = select(_ENDPOINTS.c.id).where(_ENDPOINTS.c.account_id == bindparam("b_account_id"))


@functools.cache
def _finish_statement(columns: tuple[str, ...]) -> Any:
    """The terminal UPDATE setting `columns` (one statement per set of columns, built once)."""
    values: dict[str, Any] = {name: bindparam(f"b_{name}") for name in columns}
    return (
        update(_RUNS)
        .where(_HELD, from_states(_RUNS.c.status, FINISH.sources))
        .values(lease_owner=None, lease_expires_at=None, **values)
        .returning(_RUNS.c.id, _HAS_ENDPOINTS.exists(), _RUNS.c.cancel_reason)
    )


@dataclass(frozen=True, slots=True)
class ExpiredRun:
    run_id: str
    thread_id: str
    account_id: int
    agent_id: str
    attempts: int
    lease_owner: str | None
    webhook_url: str | None


@dataclass(frozen=True, slots=True)
class StartedRun:
    """What the claim's UPDATE of a run returns (its row, now running under a lease)."""

    account_id: int
    agent_id: str
    model: str
    prompt: str
    agent_config: AgentConfig
    attempts: int
    last_event_seq: int
    created_at: datetime
    cancel_requested: bool
    webhook_url: str | None
    # How many times the run has waited for its caller: > 0, it resumes from its last wait.
    waits: int


@functools.cache
def _claimable(limit: int, *, lock: bool) -> Any:
    earlier = aliased(Run)
    # The oldest queued run of each thread whose thread has nothing running: runs of one thread
    # execute one at a time, in order.
    blocked = exists().where(
        earlier.thread_id == Run.thread_id,
        earlier.id != Run.id,
        or_(
            # A run waiting for its caller keeps its thread's later runs waiting too.
            earlier.status.in_((RunStatus.RUNNING, RunStatus.REQUIRES_ACTION)),
            and_(
                earlier.status == RunStatus.QUEUED,
                or_(
                    earlier.created_at < Run.created_at,
                    and_(earlier.created_at == Run.created_at, earlier.id < Run.id),
                ),
            ),
        ),
    )
    query = (
        select(Run.id, Run.thread_id)
        .where(from_states(Run.status, CLAIM.sources), ~blocked)
        .order_by(Run.created_at, Run.id)
        .limit(limit)
    )
    # PostgreSQL: workers skip the rows others are claiming instead of queueing behind them.
    # SQLite needs nothing: its writers are already serialized (BEGIN IMMEDIATE).
    return query.with_for_update(skip_locked=True, of=Run) if lock else query


def claimable(session: Session, *, limit: int, lock_rows: bool) -> list[tuple[str, str]]:
    """(run id, thread id) of up to `limit` runs a worker may start now, oldest first."""
    return [
        (run_id, thread_id)
        for run_id, thread_id in session.execute(_claimable(limit, lock=lock_rows))
    ]


@dataclass(frozen=True, slots=True)
class TakenThread:
    # The thread has a run in history besides this one, or a fork's base: its history may not
    # be empty.
    has_history: bool


def take_thread(session: Session, *, thread_id: str, run_id: str) -> TakenThread | None:
    """The thread mutex: a conditional update, so two workers cannot start one thread twice.
    None when another run holds the thread."""
    took = session.connection().execute(
        _TAKE_THREAD, {"b_thread_id": thread_id, "b_run_id": run_id}
    )
    row = took.first()
    return None if row is None else TakenThread(has_history=bool(row[1]))


def start_run(
    session: Session, *, run_id: str, owner: str, lease_expires_at: datetime, now: datetime
) -> StartedRun | None:
    """queued -> running under `owner`'s lease, attempt + 1; None if it is no longer queued.
    The sequence number advances by one for `run.started`, and by one more for `run.restarted`
    on a later attempt."""
    started = {
        "b_run_id": run_id,
        "b_owner": owner,
        "b_lease_expires_at": lease_expires_at,
        "b_now": now,
    }
    row = session.connection().execute(_START_RUN, started).first()
    return None if row is None else StartedRun(*row)


def release_thread(session: Session, *, thread_id: str, run_id: str) -> None:
    session.connection().execute(_RELEASE_THREAD, {"b_thread_id": thread_id, "b_run_id": run_id})


def checkpoint(
    session: Session,
    *,
    run_id: str,
    owner: str,
    attempt: int,
    last_event_seq: int,
    lease_seconds: float,
    event_rows: Sequence[EventRow],
) -> bool | None:
    """Persist events and renew the lease. The cancel flag, or None when the lease is lost."""
    renewed = {
        "b_run_id": run_id,
        "b_owner": owner,
        "b_attempt": attempt,
        "b_last_event_seq": last_event_seq,
        "b_lease_expires_at": utcnow() + timedelta(seconds=lease_seconds),
    }
    flag = session.connection().scalar(_CHECKPOINT, renewed)
    if flag is None:
        return None
    event_store.insert_events(session, event_rows)
    return bool(flag)


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint(Together):
    """`checkpoint` as a write batcher operation: the checkpoints one after the other in a
    batch (a streamed run writes one per flush, ≈ 10, and a thousand runs stream at once) are
    one UPDATE of all their runs."""

    run_id: str
    owner: str
    attempt: int
    last_event_seq: int
    lease_seconds: float
    event_rows: Sequence[EventRow]

    def __call__(self, session: Session) -> bool | None:
        return checkpoint(
            session,
            run_id=self.run_id,
            owner=self.owner,
            attempt=self.attempt,
            last_event_seq=self.last_event_seq,
            lease_seconds=self.lease_seconds,
            event_rows=self.event_rows,
        )

    @classmethod
    def run_together(cls, session: Session, operations: Sequence[Checkpoint]) -> list[Any]:
        """What each `checkpoint` would return, in order: one statement for runs of their own
        (a run twice, which the recorder never does, starts another statement)."""
        if len(operations) == 1:
            return [operations[0](session)]
        results: list[Any] = []
        start = 0
        while start < len(operations):
            end, runs = start, set()
            while (
                end < len(operations)
                and end - start < _CHECKPOINTS_AT_ONCE
                and operations[end].run_id not in runs
            ):
                runs.add(operations[end].run_id)
                end += 1
            results.extend(_checkpoints(session, operations[start:end]))
            start = end
        return results


def _checkpoints(session: Session, operations: Sequence[Checkpoint]) -> list[bool | None]:
    now = utcnow()
    params: dict[str, Any] = {}
    for index, each in enumerate(operations):
        params[f"b_run_id_{index}"] = each.run_id
        params[f"b_owner_{index}"] = each.owner
        params[f"b_attempt_{index}"] = each.attempt
        params[f"b_last_event_seq_{index}"] = each.last_event_seq
        params[f"b_lease_expires_at_{index}"] = now + timedelta(seconds=each.lease_seconds)
    # Sizes past 8 rounded up to 16 or 32 (the rest NULL rows, which match no run): each size
    # is a statement that SQLAlchemy compiles (≈ 9 ms of CPU at 32) and sqlite3 or asyncpg
    # prepare, once per process; 10 of them in all.
    size = len(operations) if len(operations) <= 8 else 16 if len(operations) <= 16 else 32
    for index in range(len(operations), size):
        for name in _CHECKPOINT_COLUMNS:
            params[f"b_{name}_{index}"] = None
    flags = dict(session.connection().execute(_checkpoints_statement(size), params).all())
    results: list[bool | None] = []
    for each in operations:
        flag = flags.get(each.run_id)
        if flag is None:
            results.append(None)
        else:
            event_store.insert_events(session, each.event_rows)
            results.append(bool(flag))
    return results


# At most this many runs per statement: past a few the CPU per run is flat (13-19 µs of CPU a
# checkpoint from 16 runs on, docs/decisions/0013-batched-checkpoints-and-event-inserts.md),
# and every size more is a statement more to compile.
_CHECKPOINTS_AT_ONCE = 32
_CHECKPOINT_COLUMNS = {
    "run_id": _RUNS.c.id,
    "owner": _RUNS.c.lease_owner,
    "attempt": _RUNS.c.attempts,
    "last_event_seq": _RUNS.c.last_event_seq,
    "lease_expires_at": _RUNS.c.lease_expires_at,
}


@functools.cache
def _checkpoints_statement(count: int) -> Any:
    """`_CHECKPOINT` for `count` runs: their values in a CTE joined by UPDATE … FROM (SQL that
    SQLite and PostgreSQL both take). A UNION ALL of bound rows, not `values()`: SQLAlchemy does
    not cache a statement with a VALUES of bound data and compiled it at every execution."""
    rows = [
        select(
            *(
                bindparam(f"b_{name}_{index}", type_=each.type).label(name)
                for name, each in _CHECKPOINT_COLUMNS.items()
            )
        )
        for index in range(count)
    ]
    held = (rows[0] if count == 1 else union_all(*rows)).cte("held")
    return (
        update(_RUNS)
        .where(
            _RUNS.c.id == held.c.run_id,
            _RUNS.c.lease_owner == held.c.owner,
            _RUNS.c.attempts == held.c.attempt,
            from_states(_RUNS.c.status, LEASED),
        )
        .values(last_event_seq=held.c.last_event_seq, lease_expires_at=held.c.lease_expires_at)
        .returning(_RUNS.c.id, _RUNS.c.cancel_requested)
    )


@dataclass(frozen=True, slots=True)
class FinishedRun:
    # The run's account has webhook endpoints (read in the same statement as the update).
    has_endpoints: bool
    # Why its cancel was asked (`CancelReason`), for a run that ends cancelled.
    cancel_reason: str | None = None


def finish(
    session: Session,
    *,
    run_id: str,
    account_id: int,
    owner: str,
    attempt: int,
    values: RunColumns,
) -> FinishedRun | None:
    """Write the terminal state while holding the lease; None (nothing written) otherwise.
    `account_id` is the run's (whose webhook endpoints the result says exist or not)."""
    statement = _finish_statement(tuple(sorted(values)))
    held = {"b_run_id": run_id, "b_owner": owner, "b_attempt": attempt, "b_account_id": account_id}
    params = {f"b_{name}": value for name, value in values.items()}
    row = session.connection().execute(statement, {**held, **params}).first()
    return None if row is None else FinishedRun(has_endpoints=bool(row[1]), cancel_reason=row[2])


def renew_leases(
    session: Session, *, owner: str, run_ids: Sequence[str], lease_seconds: float
) -> dict[str, bool]:
    """Extend the leases this worker still holds; run id → cancel requested."""
    if not run_ids:
        return {}
    rows = session.execute(
        update(Run)
        .where(Run.id.in_(run_ids), Run.lease_owner == owner, from_states(Run.status, LEASED))
        .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
        .returning(Run.id, Run.cancel_requested)
    )
    return {run_id: bool(flag) for run_id, flag in rows.all()}


async def expired_runs(
    session: AsyncSession, *, now: datetime, limit: int = 100
) -> list[ExpiredRun]:
    expired = [from_states(Run.status, REQUEUE.sources), Run.lease_expires_at < now]
    return await runs_as(session, ExpiredRun, where=expired, limit=limit)


async def runs_as(
    session: AsyncSession, shape: type[Shape], *, where: Sequence[ColumnElement[bool]], limit: int
) -> list[Shape]:
    """Up to `limit` runs matching `where`, each as `shape`: a dataclass whose fields are
    columns of the run (`run_id` its id), read in the order of its fields."""
    names = [each.name for each in fields(shape)]
    columns = [Run.id if name == "run_id" else getattr(Run, name) for name in names]
    rows = await session.execute(select(*columns).where(*where).limit(limit))
    return [shape(*row) for row in rows.all()]


def requeue(
    session: Session, *, run_id: str, owner: str | None, expired_before: datetime | None
) -> tuple[int, str] | None:
    """Put a running run back in the queue (its lease expired, or its worker is stopping).
    The new last event sequence number and the run's thread, or None when the run was not in
    that state."""
    conditions = [
        Run.id == run_id,
        from_states(Run.status, REQUEUE.sources),
        Run.lease_owner == owner,
    ]
    if expired_before is not None:
        conditions.append(Run.lease_expires_at < expired_before)
    found = session.execute(
        update(Run)
        .where(*conditions)
        .values(
            status=REQUEUE.target,
            lease_owner=None,
            lease_expires_at=None,
            last_event_seq=Run.last_event_seq + 1,
        )
        .returning(Run.last_event_seq, Run.thread_id)
    ).first()
    if found is None:
        return None
    # The next attempt writes its own artifacts; partial ones from this attempt would linger.
    # A run that waited for its caller resumes from its last answer: what it wrote before that
    # is part of the state it resumes from, and stays.
    answered = (
        select(func.max(RunAction.created_at)).where(RunAction.run_id == run_id).scalar_subquery()
    )
    session.execute(
        delete(Artifact).where(
            Artifact.run_id == run_id, or_(answered.is_(None), Artifact.created_at > answered)
        )
    )
    return int(found[0]), str(found[1])


def fail_expired(
    session: Session, *, run_id: str, owner: str | None, now: datetime, values: RunColumns
) -> int | None:
    """Fail a run whose lease expired on its last allowed attempt; its final event's sequence."""
    expired = [
        Run.id == run_id,
        from_states(Run.status, FAIL_LOST.sources),
        Run.lease_owner == owner,
        Run.lease_expires_at < now,
    ]
    released: RunColumns = {"lease_owner": None, "lease_expires_at": None, **values}
    return event_store.update_run_for_event(session, where=expired, values=released)


async def running_runs_of(session: AsyncSession, *, owner: str) -> list[str]:
    rows = await session.scalars(
        select(Run.id).where(Run.lease_owner == owner, from_states(Run.status, LEASED))
    )
    return list(rows)


def cancel_queued(
    session: Session, *, run_id: str, now: datetime, reason: CancelReason
) -> int | None:
    """Cancel a run still waiting in the queue; the sequence number of its final event, or None
    when a worker claimed it first (the conditional update is the arbiter)."""
    cancelled: RunColumns = {
        "status": CANCEL_QUEUED.target,
        "finished_at": now,
        "cancel_requested": True,
        "cancel_reason": reason,
    }
    queued = [Run.id == run_id, from_states(Run.status, CANCEL_QUEUED.sources)]
    return event_store.update_run_for_event(session, where=queued, values=cancelled)


def request_cancel(session: Session, *, run_id: str, reason: CancelReason) -> bool:
    """Flag a running run; its worker stops it at the next step. False if no longer running.
    A run flagged twice keeps the first reason: that cancel is the one its worker acts on."""
    result = session.execute(
        update(Run)
        .where(Run.id == run_id, from_states(Run.status, REQUEST_CANCEL.sources))
        .values(
            cancel_requested=True,
            cancel_reason=func.coalesce(Run.cancel_reason, reason),
        )
        .returning(Run.id)
        .execution_options(synchronize_session=False)
    )
    return result.first() is not None
