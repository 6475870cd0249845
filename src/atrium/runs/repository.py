"""SQL of the runs API: threads, runs, events and artifacts as the endpoints read and write them.

The worker's queue statements (claim, lease, finish) live in `atrium.worker.queue`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Row, Table, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, defer

from atrium.db.models import Artifact, Run, RunEvent, Thread
from atrium.kit.cursor import Position, older_than


async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run | None:
    return await session.scalar(
        select(Run)
        .where(Run.id == run_id, Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )


async def get_run_by_idempotency_key(
    session: AsyncSession, *, account_id: int, key: str
) -> Run | None:
    return await session.scalar(
        select(Run).where(Run.account_id == account_id, Run.idempotency_key == key)
    )


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
        .options(defer(Run.messages), defer(Run.agent_config), defer(Run.prompt))
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


_EVENTS = cast(Table, RunEvent.__table__)
# The tables, not the mapped classes: an ORM-enabled INSERT goes through the bulk-insert layer
# (CPU, same SQL).
_INSERT_THREAD = insert(cast(Table, Thread.__table__))
_INSERT_RUN = insert(cast(Table, Run.__table__))
_INSERT_EVENTS = insert(_EVENTS)
# Plain rows of the table, not RunEvent objects: every stream replays, and building ORM
# identities for rows that are only turned into JSON was a visible share of a stream's CPU.
_EVENTS_AFTER = (
    select(_EVENTS.c.run_id, _EVENTS.c.seq, _EVENTS.c.kind, _EVENTS.c.data, _EVENTS.c.created_at)
    .where(_EVENTS.c.run_id == bindparam("b_run_id"), _EVENTS.c.seq > bindparam("b_after_seq"))
    .order_by(_EVENTS.c.seq)
)
# The point reads of every create and stream open, built once (see `worker.queue` on why).
_THREAD_OF_ACCOUNT = select(Thread.id).where(
    Thread.id == bindparam("b_thread_id"), Thread.account_id == bindparam("b_account_id")
)
_RUN_OF_ACCOUNT = select(Run.id).where(
    Run.id == bindparam("b_run_id"), Run.account_id == bindparam("b_account_id")
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


async def insert_events(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        await session.execute(_INSERT_EVENTS, list(rows))


async def cancel_queued(session: AsyncSession, *, run_id: str, now: datetime) -> int | None:
    """Cancel a run still waiting in the queue; the sequence number of its final event, or None
    when a worker claimed it first (the conditional update is the arbiter)."""
    seq = await session.scalar(
        update(Run)
        .where(Run.id == run_id, Run.status == "queued")
        .values(
            status="cancelled",
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
        .where(Run.id == run_id, Run.status == "running")
        .values(cancel_requested=True)
        .returning(Run.id)
    )
    return result.first() is not None
