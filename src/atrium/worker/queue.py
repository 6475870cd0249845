"""SQL of the run queue: claim with a lease, renew, checkpoint, finish, re-queue.

The writes are synchronous functions of a `Session`: the write batcher (or, for the rare ones,
`Database.write_sync`) runs each transaction whole in SQLite's writer thread. The reads a worker
makes outside its transactions are the async functions at the end.

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

from sqlalchemy import Table, and_, bindparam, delete, exists, func, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, aliased, defer

from atrium.db.models import Artifact, Run, RunEvent, Thread
from atrium.kit.time import utcnow
from atrium.runs import events

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
_INSERT_EVENTS = insert(_EVENTS)
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
    .where(_RUNS.c.id == bindparam("b_run_id"), _RUNS.c.status == "queued")
    .values(
        status="running",
        attempts=_RUNS.c.attempts + 1,
        lease_owner=bindparam("b_owner"),
        lease_expires_at=bindparam("b_lease_expires_at"),
        started_at=func.coalesce(
            _RUNS.c.started_at, bindparam("b_now", type_=_RUNS.c.started_at.type)
        ),
        last_event_seq=_RUNS.c.last_event_seq + 1,
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
    )
)
# Held: still running under this owner's lease, and on this attempt. The attempt matters when
# one process claims a run again after its own lease of it expired (a stalled event loop): the
# owner is the same, and only the attempt tells the stale execution from the new one.
_HELD = and_(
    _RUNS.c.id == bindparam("b_run_id"),
    _RUNS.c.lease_owner == bindparam("b_owner"),
    _RUNS.c.attempts == bindparam("b_attempt"),
    _RUNS.c.status == "running",
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
        _RUNS.c.status == "completed",
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


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run this worker now holds the lease of (plain values: no ORM object outlives a session)."""

    run_id: str
    account_id: int
    thread_id: str
    agent_id: str
    model: str
    prompt: str
    config: dict[str, Any]
    attempt: int
    last_event_seq: int
    created_at: datetime
    cancel_requested: bool
    started_event: dict[str, Any]
    # The messages of the thread's earlier completed runs (pydantic-ai JSON), oldest first.
    history: list[list[Any]]
    # The run's own webhook (its signing secret is read by the sender, not kept here).
    webhook_url: str | None = None


@dataclass(frozen=True, slots=True)
class ExpiredRun:
    run_id: str
    thread_id: str
    account_id: int
    agent_id: str
    attempts: int
    lease_owner: str | None


@functools.cache
def _claimable(limit: int, *, lock: bool) -> Any:
    earlier = aliased(Run)
    # The oldest queued run of each thread whose thread has nothing running: runs of one thread
    # execute one at a time, in order.
    blocked = exists().where(
        earlier.thread_id == Run.thread_id,
        earlier.id != Run.id,
        or_(
            earlier.status == "running",
            and_(
                earlier.status == "queued",
                or_(
                    earlier.created_at < Run.created_at,
                    and_(earlier.created_at == Run.created_at, earlier.id < Run.id),
                ),
            ),
        ),
    )
    query = (
        select(Run.id, Run.thread_id)
        .where(Run.status == "queued", ~blocked)
        .order_by(Run.created_at, Run.id)
        .limit(limit)
    )
    # PostgreSQL: workers skip the rows others are claiming instead of queueing behind them.
    # SQLite needs nothing: its writers are already serialized (BEGIN IMMEDIATE).
    return query.with_for_update(skip_locked=True, of=Run) if lock else query


def claim(
    session: Session, *, owner: str, limit: int, lease_seconds: float, lock_rows: bool
) -> list[ClaimedRun]:
    """Claim up to `limit` runs: status running, a lease, attempt + 1, a `run.started` event."""
    candidates = (session.execute(_claimable(limit, lock=lock_rows))).all()
    # Read the clock after the queue: a run's start is never stamped before the end of the run
    # it waited for.
    now = utcnow()
    claimed: list[ClaimedRun] = []
    for run_id, thread_id in candidates:
        # The thread mutex: a conditional update, so two workers cannot start one thread twice.
        took = session.execute(_TAKE_THREAD, {"b_thread_id": thread_id, "b_run_id": run_id})
        if took.first() is None:
            continue
        started_values = {
            "b_run_id": run_id,
            "b_owner": owner,
            "b_lease_expires_at": now + timedelta(seconds=lease_seconds),
            "b_now": now,
        }
        row = session.execute(_START_RUN, started_values).first()
        if row is None:
            release_thread(session, thread_id=thread_id, run_id=run_id)
            continue
        started = events.event_row(
            run_id,
            row.last_event_seq,
            events.STARTED,
            {"status": "running", "attempt": row.attempts},
            now,
        )
        session.execute(_INSERT_EVENTS, [started])
        claimed.append(
            ClaimedRun(
                run_id=run_id,
                account_id=row.account_id,
                thread_id=thread_id,
                agent_id=row.agent_id,
                model=row.model,
                prompt=row.prompt,
                config=dict(row.agent_config),
                attempt=row.attempts,
                last_event_seq=row.last_event_seq,
                created_at=row.created_at,
                cancel_requested=bool(row.cancel_requested),
                started_event=started,
                history=_thread_history(
                    session, thread_id=thread_id, run_id=run_id, created_at=row.created_at
                ),
                webhook_url=row.webhook_url,
            )
        )
    return claimed


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
        .where(Run.id.in_(run_ids), Run.lease_owner == owner, Run.status == "running")
        .values(lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))
        .returning(Run.id, Run.cancel_requested)
    )
    return {run_id: bool(flag) for run_id, flag in rows.all()}


async def expired_runs(
    session: AsyncSession, *, now: datetime, limit: int = 100
) -> list[ExpiredRun]:
    rows = await session.execute(
        select(Run.id, Run.thread_id, Run.account_id, Run.agent_id, Run.attempts, Run.lease_owner)
        .where(Run.status == "running", Run.lease_expires_at < now)
        .limit(limit)
    )
    return [ExpiredRun(*row) for row in rows.all()]


def requeue(
    session: Session, *, run_id: str, owner: str | None, expired_before: datetime | None
) -> int | None:
    """Put a running run back in the queue (its lease expired, or its worker is stopping).
    The new last event sequence number, or None when the run was not in that state."""
    conditions = [Run.id == run_id, Run.status == "running", Run.lease_owner == owner]
    if expired_before is not None:
        conditions.append(Run.lease_expires_at < expired_before)
    seq = session.scalar(
        update(Run)
        .where(*conditions)
        .values(
            status="queued",
            lease_owner=None,
            lease_expires_at=None,
            last_event_seq=Run.last_event_seq + 1,
        )
        .returning(Run.last_event_seq)
    )
    if seq is None:
        return None
    # The next attempt writes its own artifacts; partial ones from this attempt would linger.
    session.execute(delete(Artifact).where(Artifact.run_id == run_id))
    return int(seq)


def fail_expired(
    session: Session, *, run_id: str, owner: str | None, now: datetime, values: dict[str, Any]
) -> int | None:
    """Fail a run whose lease expired on its last allowed attempt; its final event's sequence."""
    seq = session.scalar(
        update(Run)
        .where(
            Run.id == run_id,
            Run.status == "running",
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


def _thread_history(
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


def insert_events(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.execute(_INSERT_EVENTS, list(rows))


def thread_of(session: Session, *, run_id: str) -> str:
    thread_id = session.scalar(select(Run.thread_id).where(Run.id == run_id))
    return str(thread_id)


def webhook_url_of(session: Session, *, run_id: str) -> str | None:
    found = session.scalar(select(_RUNS.c.webhook_url).where(_RUNS.c.id == run_id))
    return None if found is None else str(found)


async def running_runs_of(session: AsyncSession, *, owner: str) -> list[str]:
    rows = await session.scalars(
        select(Run.id).where(Run.lease_owner == owner, Run.status == "running")
    )
    return list(rows)
