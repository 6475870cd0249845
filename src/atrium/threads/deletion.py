"""Deleting threads: every row they own, in one transaction per call.

`delete_threads(db, thread_ids)` removes the threads, their runs and everything of those runs
(events, artifacts with their bytes, answers to waits, webhook deliveries) and the threads'
summaries; usage rollups (`agent_usage_daily`) are the account's billing and stay. It does not
stop runs: `service.delete_thread` cancels a thread's unfinished runs first and gives a running
one a moment to end. A run whose worker is still executing when its rows go is harmless: every
write a worker makes for a run is a conditional UPDATE of the run's row under its lease
(`run_queue`), which then matches nothing, so the worker stops as if its lease were lost and
writes no event, artifact, usage or delivery for it; the other runs of a write batch commit
as usual.

Retention deletes finished threads with it, a few at a time: a call is one transaction, as
short as its threads are small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, delete, select
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.db.models import (
    Artifact,
    Run,
    RunAction,
    RunEvent,
    Thread,
    ThreadSummary,
    WebhookDelivery,
)

_RUNS = cast(Table, Run.__table__)
# Children first: nothing is left to the foreign keys' cascades, so the counts are exact and
# a database without them enforced (a hand-made SQLite connection) ends up the same.
_OF_RUNS: tuple[Table, ...] = tuple(
    cast(Table, model.__table__) for model in (WebhookDelivery, RunEvent, RunAction, Artifact)
)


@dataclass(frozen=True, slots=True)
class DeletedRows:
    """How many rows went, per table name."""

    counts: dict[str, int]

    @property
    def threads(self) -> int:
        return self.counts.get("threads", 0)


def delete_thread_rows(session: Session, thread_ids: Sequence[str]) -> DeletedRows:
    """Delete the threads and every row they own, in the caller's transaction."""
    counts: dict[str, int] = {}
    if not thread_ids:
        return DeletedRows(counts)
    conn = session.connection()
    runs = select(_RUNS.c.id).where(_RUNS.c.thread_id.in_(thread_ids)).scalar_subquery()
    for table in _OF_RUNS:
        counts[table.name] = conn.execute(delete(table).where(table.c.run_id.in_(runs))).rowcount
    summaries = cast(Table, ThreadSummary.__table__)
    counts[summaries.name] = conn.execute(
        delete(summaries).where(summaries.c.thread_id.in_(thread_ids))
    ).rowcount
    counts[_RUNS.name] = conn.execute(
        delete(_RUNS).where(_RUNS.c.thread_id.in_(thread_ids))
    ).rowcount
    threads = cast(Table, Thread.__table__)
    counts[threads.name] = conn.execute(
        delete(threads).where(threads.c.id.in_(thread_ids))
    ).rowcount
    return DeletedRows(counts)


async def delete_threads(db: Database, thread_ids: Sequence[str]) -> DeletedRows:
    """Own transaction: the threads and every row they own (see the module docstring)."""
    ids = list(thread_ids)
    return await db.write_sync(lambda session: delete_thread_rows(session, ids))
