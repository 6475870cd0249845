"""SQL of runs: threads, runs (the work queue too), their events and artifacts.

The API's reads are async functions of the request's session. The writes are synchronous
functions of a `Session`: the write batcher (or, for the rare ones, `Database.write_sync`) runs
each transaction whole in SQLite's writer thread; `atrium.runs.lifecycle` is what calls the ones
that change a run's status.

Every write a worker makes for a run is conditional on still holding its lease (`lease_owner`
and `status = 'running'`). A worker that lost its lease (it stalled past the lease, the run was
re-queued and claimed elsewhere) therefore writes nothing: no second result, artifact or usage.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Connection,
    Row,
    Table,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, aliased, defer

from atrium.db.models import Artifact, Run, RunAction, RunEvent, RunStatus, Thread
from atrium.kit.cursor import Position, older_than
from atrium.kit.time import utcnow

# The hot statements use the tables, not the mapped classes: an ORM-enabled INSERT/UPDATE goes
# through SQLAlchemy's bulk-persistence layer, which cost about 0.15 ms of CPU per statement
# more than the same Core statement (no ORM objects are involved either way).
_RUNS = cast(Table, Run.__table__)
_THREADS = cast(Table, Thread.__table__)
_EVENTS = cast(Table, RunEvent.__table__)
_ARTIFACTS = cast(Table, Artifact.__table__)

# The statements of every run are built once, with bound parameters, and executed with each
# run's values: building an UPDATE and computing its cache key cost several times more CPU than
# executing it (1.3 vs 0.3 ms measured on SQLite), about a dozen times per run.
_INSERT_ARTIFACT = insert(_ARTIFACTS)
_TAKE_THREAD = (
    update(_THREADS)
    .where(_THREADS.c.id == bindparam("b_thread_id"), _THREADS.c.active_run_id.is_(None))
    .values(active_run_id=bindparam("b_run_id"))
    .returning(_THREADS.c.id)
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
    .where(_RUNS.c.id == bindparam("b_run_id"), _RUNS.c.status == RunStatus.QUEUED)
    .values(
        status=RunStatus.RUNNING,
        attempts=_RUNS.c.attempts + 1,
        lease_owner=bindparam("b_owner"),
        lease_expires_at=bindparam("b_lease_expires_at"),
        started_at=func.coalesce(
            _RUNS.c.started_at, bindparam("b_now", type_=_RUNS.c.started_at.type)
        ),
        # `attempts` on the right is the value before this update: 0 on the first attempt.
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
    _RUNS.c.status == RunStatus.RUNNING,
)
_CHECKPOINT = (
    update(_RUNS)
    .where(_HELD)
    .values(
        last_event_seq=bindparam("b_last_event_seq"),
        lease_expires_at=bindparam("b_lease_expires_at"),
    )
    .returning(_RUNS.c.cancel_requested)
)
_DELETE_ARTIFACT = delete(_ARTIFACTS).where(
    _ARTIFACTS.c.run_id == bindparam("b_run_id"), _ARTIFACTS.c.name == bindparam("b_name")
)
_THREAD_HISTORY = (
    select(_RUNS.c.messages)
    .where(
        _RUNS.c.thread_id == bindparam("b_thread_id"),
        _RUNS.c.status == RunStatus.COMPLETED,
        _RUNS.c.id != bindparam("b_run_id"),
        or_(
            _RUNS.c.created_at < bindparam("b_created_at"),
            and_(
                _RUNS.c.created_at == bindparam("b_created_at"),
                _RUNS.c.id < bindparam("b_run_id"),
            ),
        ),
    )
    .order_by(_RUNS.c.created_at, _RUNS.c.id)
)
# The tables, not the mapped classes: an ORM-enabled INSERT goes through the bulk-insert layer
# (CPU, same SQL).
_INSERT_THREAD = insert(_THREADS)
_INSERT_RUN = insert(_RUNS)
_INSERT_EVENTS = insert(_EVENTS)
# Plain rows of the table, not RunEvent objects: every stream replays, and building ORM
# identities for rows that are only turned into JSON was a visible share of a stream's CPU.
_EVENTS_AFTER = (
    select(_EVENTS.c.run_id, _EVENTS.c.seq, _EVENTS.c.kind, _EVENTS.c.data, _EVENTS.c.created_at)
    .where(_EVENTS.c.run_id == bindparam("b_run_id"), _EVENTS.c.seq > bindparam("b_after_seq"))
    .order_by(_EVENTS.c.seq)
)
# The point reads of every create and stream open, built once (see the queue's above).
_THREAD_OF_ACCOUNT = select(Thread.id).where(
    Thread.id == bindparam("b_thread_id"), Thread.account_id == bindparam("b_account_id")
)
_RUN_OF_ACCOUNT = select(Run.id).where(
    Run.id == bindparam("b_run_id"), Run.account_id == bindparam("b_account_id")
)


@functools.cache
def _finish_statement(columns: tuple[str, ...]) -> Any:
    """The terminal UPDATE setting `columns` (one statement per set of columns, built once)."""
    values: dict[str, Any] = {name: bindparam(f"b_{name}") for name in columns}
    return (
        update(_RUNS)
        .where(_HELD)
        .values(lease_owner=None, lease_expires_at=None, **values)
        .returning(_RUNS.c.id)
    )


# --- the worker's queue: claim, lease, checkpoint, finish, re-queue ----------------------------
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
    agent_config: dict[str, Any]
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
        .where(Run.status == RunStatus.QUEUED, ~blocked)
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


def take_thread(session: Session, *, thread_id: str, run_id: str) -> bool:
    """The thread mutex: a conditional update, so two workers cannot start one thread twice."""
    took = session.execute(_TAKE_THREAD, {"b_thread_id": thread_id, "b_run_id": run_id})
    return took.first() is not None


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
    row = session.execute(_START_RUN, started).first()
    return None if row is None else StartedRun(*row)


def release_thread(session: Session, *, thread_id: str, run_id: str) -> None:
    session.execute(_RELEASE_THREAD, {"b_thread_id": thread_id, "b_run_id": run_id})


def checkpoint(
    session: Session,
    *,
    run_id: str,
    owner: str,
    attempt: int,
    last_event_seq: int,
    lease_seconds: float,
    event_rows: Sequence[dict[str, Any]],
) -> bool | None:
    """Persist events and renew the lease. The cancel flag, or None when the lease is lost."""
    renewed = {
        "b_run_id": run_id,
        "b_owner": owner,
        "b_attempt": attempt,
        "b_last_event_seq": last_event_seq,
        "b_lease_expires_at": utcnow() + timedelta(seconds=lease_seconds),
    }
    flag = session.scalar(_CHECKPOINT, renewed)
    if flag is None:
        return None
    if event_rows:
        session.execute(_INSERT_EVENTS, list(event_rows))
    return bool(flag)


def put_artifact(session: Session, values: dict[str, Any]) -> None:
    """Store an artifact; a second write of the same name in the run replaces the first."""
    session.execute(_DELETE_ARTIFACT, {"b_run_id": values["run_id"], "b_name": values["name"]})
    session.execute(_INSERT_ARTIFACT, [values])


def finish(
    session: Session, *, run_id: str, owner: str, attempt: int, values: dict[str, Any]
) -> bool:
    """Write the terminal state while holding the lease; False (nothing written) otherwise."""
    statement = _finish_statement(tuple(sorted(values)))
    held = {"b_run_id": run_id, "b_owner": owner, "b_attempt": attempt}
    params = {f"b_{name}": value for name, value in values.items()}
    done = session.execute(statement, {**held, **params})
    return done.first() is not None


def renew_leases(
    session: Session, *, owner: str, run_ids: Sequence[str], lease_seconds: float
) -> dict[str, bool]:
    """Extend the leases this worker still holds; run id → cancel requested."""
    if not run_ids:
        return {}
    rows = session.execute(
        update(Run)
        .where(Run.id.in_(run_ids), Run.lease_owner == owner, Run.status == RunStatus.RUNNING)
        .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
        .returning(Run.id, Run.cancel_requested)
    )
    return {run_id: bool(flag) for run_id, flag in rows.all()}


async def expired_runs(
    session: AsyncSession, *, now: datetime, limit: int = 100
) -> list[ExpiredRun]:
    rows = await session.execute(
        select(
            Run.id,
            Run.thread_id,
            Run.account_id,
            Run.agent_id,
            Run.attempts,
            Run.lease_owner,
            Run.webhook_url,
        )
        .where(Run.status == RunStatus.RUNNING, Run.lease_expires_at < now)
        .limit(limit)
    )
    return [ExpiredRun(*row) for row in rows.all()]


def requeue(
    session: Session, *, run_id: str, owner: str | None, expired_before: datetime | None
) -> tuple[int, str] | None:
    """Put a running run back in the queue (its lease expired, or its worker is stopping).
    The new last event sequence number and the run's thread, or None when the run was not in
    that state."""
    conditions = [Run.id == run_id, Run.status == RunStatus.RUNNING, Run.lease_owner == owner]
    if expired_before is not None:
        conditions.append(Run.lease_expires_at < expired_before)
    found = session.execute(
        update(Run)
        .where(*conditions)
        .values(
            status=RunStatus.QUEUED,
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
    session: Session, *, run_id: str, owner: str | None, now: datetime, values: dict[str, Any]
) -> int | None:
    """Fail a run whose lease expired on its last allowed attempt; its final event's sequence."""
    seq = session.scalar(
        update(Run)
        .where(
            Run.id == run_id,
            Run.status == RunStatus.RUNNING,
            Run.lease_owner == owner,
            Run.lease_expires_at < now,
        )
        .values(
            lease_owner=None,
            lease_expires_at=None,
            last_event_seq=Run.last_event_seq + 1,
            **values,
        )
        .returning(Run.last_event_seq)
    )
    return None if seq is None else int(seq)


def thread_history(
    session: Session, *, thread_id: str, run_id: str, created_at: datetime
) -> list[list[Any]]:
    """Stored messages of the thread's completed runs created before this one, oldest first.
    Read by the claim, in the writer's transaction: no extra read session per run."""
    rows = session.scalars(
        _THREAD_HISTORY,
        {"b_thread_id": thread_id, "b_run_id": run_id, "b_created_at": created_at},
    )
    return [messages for messages in rows if messages]


async def thread_artifacts(session: AsyncSession, *, thread_id: str) -> Sequence[Artifact]:
    return (
        await session.scalars(
            select(Artifact)
            .where(Artifact.thread_id == thread_id)
            .options(defer(Artifact.content))
            .order_by(Artifact.created_at, Artifact.id)
        )
    ).all()


async def thread_artifact(session: AsyncSession, *, thread_id: str, name: str) -> Artifact | None:
    return await session.scalar(
        select(Artifact)
        .where(Artifact.thread_id == thread_id, Artifact.name == name)
        .order_by(Artifact.created_at.desc())
        .limit(1)
    )


async def running_runs_of(session: AsyncSession, *, owner: str) -> list[str]:
    rows = await session.scalars(
        select(Run.id).where(Run.lease_owner == owner, Run.status == RunStatus.RUNNING)
    )
    return list(rows)


# --- the API -----------------------------------------------------------------------------------
async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run | None:
    return await session.scalar(
        select(Run)
        .where(Run.id == run_id, Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )


def get_run_by_idempotency_key(conn: Connection, *, account_id: int, key: str) -> Run | None:
    """A point read (`Database.point_read`: the unique index on account and key finds at most
    one row), loaded as a `Run` by a session on that connection."""
    with Session(bind=conn, expire_on_commit=False) as session:
        run = session.scalar(
            select(Run).where(Run.account_id == account_id, Run.idempotency_key == key)
        )
        if run is not None:
            session.expunge(run)
        return run


async def list_runs(
    session: AsyncSession,
    *,
    account_id: int,
    status: str | None,
    agent_id: str | None,
    thread_id: str | None,
    before: Position | None,
    limit: int,
) -> Sequence[Run]:
    """The account's runs newest first, strictly after the cursor position `before`."""
    query = (
        select(Run)
        .where(Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )
    if status is not None:
        query = query.where(Run.status == status)
    if agent_id is not None:
        query = query.where(Run.agent_id == agent_id)
    if thread_id is not None:
        query = query.where(Run.thread_id == thread_id)
    if before is not None:
        query = query.where(older_than(Run.created_at, Run.id, before))
    query = query.order_by(Run.created_at.desc(), Run.id.desc()).limit(limit)
    return (await session.scalars(query)).all()


async def artifacts_of_runs(
    session: AsyncSession, run_ids: Sequence[str]
) -> dict[str, list[Artifact]]:
    """Artifact metadata (content not loaded) of each run, oldest first."""
    found: dict[str, list[Artifact]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return found
    rows = await session.scalars(
        select(Artifact)
        .where(Artifact.run_id.in_(run_ids))
        .options(defer(Artifact.content))
        .order_by(Artifact.created_at, Artifact.id)
    )
    for row in rows:
        found[row.run_id].append(row)
    return found


async def get_artifact(session: AsyncSession, *, run_id: str, artifact_id: str) -> Artifact | None:
    return await session.scalar(
        select(Artifact).where(Artifact.run_id == run_id, Artifact.id == artifact_id)
    )


def events_after(
    conn: Connection, *, run_id: str, after_seq: int, limit: int | None = None
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Synchronous: an index range on (run_id, seq); through `Database.point_read` only with a
    `limit` (a stream's replay batches)."""
    query = _EVENTS_AFTER if limit is None else _events_after_limited(limit)
    return conn.execute(query, {"b_run_id": run_id, "b_after_seq": after_seq}).all()


@functools.cache
def _events_after_limited(limit: int) -> Any:
    return _EVENTS_AFTER.limit(limit)


def thread_id_of_account(conn: Connection, *, account_id: int, thread_id: str) -> str | None:
    """The thread's id if the account owns it (synchronous: `Database.point_read`)."""
    params = {"b_thread_id": thread_id, "b_account_id": account_id}
    found: str | None = conn.scalar(_THREAD_OF_ACCOUNT, params)
    return found


def run_id_of_account(conn: Connection, *, account_id: int, run_id: str) -> str | None:
    """The run's id if the account owns it (synchronous: `Database.point_read`)."""
    found: str | None = conn.scalar(
        _RUN_OF_ACCOUNT, {"b_run_id": run_id, "b_account_id": account_id}
    )
    return found


def insert_run(
    session: Session,
    *,
    thread: dict[str, Any] | None,
    run: dict[str, Any],
    event: dict[str, Any],
) -> None:
    """A new run (and its new thread) with its `run.queued` event: one synchronous write for
    the write batcher (see `Database.write_sync`). The tables, not the mapped classes."""
    if thread is not None:
        session.execute(_INSERT_THREAD, [thread])
    row = {("metadata" if name == "run_metadata" else name): value for name, value in run.items()}
    session.execute(_INSERT_RUN, [row])
    session.execute(_INSERT_EVENTS, [event])


def insert_events(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(_INSERT_EVENTS, list(rows))


def cancel_queued(session: Session, *, run_id: str, now: datetime) -> int | None:
    """Cancel a run still waiting in the queue; the sequence number of its final event, or None
    when a worker claimed it first (the conditional update is the arbiter)."""
    seq = session.scalar(
        update(Run)
        .where(Run.id == run_id, Run.status == RunStatus.QUEUED)
        .values(
            status=RunStatus.CANCELLED,
            finished_at=now,
            cancel_requested=True,
            last_event_seq=Run.last_event_seq + 1,
        )
        .returning(Run.last_event_seq)
    )
    return None if seq is None else int(seq)


async def request_cancel(session: AsyncSession, *, run_id: str) -> bool:
    """Flag a running run; its worker stops it at the next step. False if no longer running."""
    result = await session.execute(
        update(Run)
        .where(Run.id == run_id, Run.status == RunStatus.RUNNING)
        .values(cancel_requested=True)
        .returning(Run.id)
    )
    return result.first() is not None
