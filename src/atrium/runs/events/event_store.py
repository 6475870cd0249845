"""SQL of run events: the rows of a run's event log, and the sequence number a run's update
takes for the event it writes next."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    Table,
    bindparam,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.db.models import EventKind, Run, RunEvent
from atrium.kit.json_object import JsonObject
from atrium.runs.events.shapes import EventRow
from atrium.runs.run_columns import RunColumns

_EVENTS = cast(Table, RunEvent.__table__)
# The table, not the mapped class: an ORM-enabled INSERT goes through the bulk-insert layer
# (CPU, same SQL).
_INSERT_EVENTS = insert(_EVENTS)
# Plain rows of the table, not RunEvent objects: every stream replays, and building ORM
# identities for rows that are only turned into JSON was a visible share of a stream's CPU.
_EVENTS_AFTER = (
    select(_EVENTS.c.run_id, _EVENTS.c.seq, _EVENTS.c.kind, _EVENTS.c.data, _EVENTS.c.created_at)
    .where(_EVENTS.c.run_id == bindparam("b_run_id"), _EVENTS.c.seq > bindparam("b_after_seq"))
    .order_by(_EVENTS.c.seq)
)


_BATCHED = "atrium_batched_events"


def insert_events(session: Session, rows: Sequence[EventRow]) -> None:
    """Insert `rows` now, or inside `batched` with the rest of the batch's at its end."""
    if not rows:
        return
    batch: list[EventRow] | None = session.info.get(_BATCHED)
    if batch is not None:
        batch.extend(rows)
    else:
        session.connection().execute(_INSERT_EVENTS, list(rows))


@contextlib.contextmanager
def batched(session: Session) -> Iterator[None]:
    """The event rows the block's statements insert, inserted together when it ends (one
    executemany, in the order they were given), in the same transaction.

    Around each of the write batcher's transactions: a streamed run inserts a row or two at
    each of its ~10 writes (its claim, every flush of its recorder, its end), and one INSERT
    per write costs about three times the CPU per row of one executemany of 30 on SQLite
    (docs/decisions/0013-batched-checkpoints-and-event-inserts.md). Nothing in those
    transactions reads events back. Should the insert fail, the batch rolls back like any
    failed statement, and the batcher retries its operations one transaction each, so the
    failure stays with the operation whose rows caused it.
    """
    rows: list[EventRow] = []
    session.info[_BATCHED] = rows
    try:
        yield
    finally:
        del session.info[_BATCHED]
    if rows:
        session.connection().execute(_INSERT_EVENTS, rows)


async def events_after(
    db: Database, *, run_id: str, after_seq: int
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Every event of the run after `after_seq`: unbounded, so read in a read session, off the
    event loop."""
    async with db.session(write=False) as session:
        conn = await session.connection()
        return await conn.run_sync(_events_after, run_id=run_id, after_seq=after_seq)


async def replay_batch(
    db: Database, *, run_id: str, after_seq: int, limit: int
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Point read: the run's next `limit` events after `after_seq` (a stream's replay)."""
    return await db.point_read(
        lambda conn: _events_after(conn, run_id=run_id, after_seq=after_seq, limit=limit)
    )


def _events_after(
    conn: Connection, *, run_id: str, after_seq: int, limit: int | None = None
) -> Sequence[Row[*tuple[Any, ...]]]:
    """An index range on (run_id, seq)."""
    query = _EVENTS_AFTER if limit is None else _events_after_limited(limit)
    return conn.execute(query, {"b_run_id": run_id, "b_after_seq": after_seq}).all()


@functools.cache
def _events_after_limited(limit: int) -> Any:
    return _EVENTS_AFTER.limit(limit)


def update_run_for_event(
    session: Session, *, where: Sequence[ColumnElement[bool]], values: RunColumns
) -> int | None:
    """One conditional UPDATE of a run that writes `values` and takes the sequence number of
    the run's next event; that number, or None when the run no longer matched `where` (another
    writer moved it first). The session's loaded objects are not touched: callers refresh the
    run they show."""
    seq = session.scalar(
        update(Run)
        .where(*where)
        .values(last_event_seq=Run.last_event_seq + 1, **values)
        .returning(Run.last_event_seq)
        .execution_options(synchronize_session=False)
    )
    return None if seq is None else int(seq)


async def tool_events_since_wait(
    session: AsyncSession, *, run_id: str
) -> list[tuple[str, JsonObject]]:
    """The run's `tool.called` and `tool.returned` events (kind, payload) since it last waited
    for its caller, or since it was created, in order."""
    events = _EVENTS.c
    waited = (
        select(func.coalesce(func.max(events.seq), 0))
        .where(events.run_id == run_id, events.kind == EventKind.REQUIRES_ACTION)
        .scalar_subquery()
    )
    rows = await session.execute(
        select(events.kind, events.data)
        .where(
            events.run_id == run_id,
            events.seq > waited,
            events.kind.in_([EventKind.TOOL_CALLED, EventKind.TOOL_RETURNED]),
        )
        .order_by(events.seq)
    )
    return [(str(kind), dict(data)) for kind, data in rows.all()]
