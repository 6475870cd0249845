"""Retention: finished threads older than `ATRIUM_RETENTION_DAYS` are deleted, a few at a time.

A thread goes when it was created before the cutoff and none of its runs is unfinished or
finished after it (`finished_at` is set by every terminal move). It goes whole, by
`deletion.delete_thread_rows`: its runs, events, artifacts, answers, summaries and webhook
deliveries; usage rollups stay (billing).

Each batch is one short write transaction of at most `_BATCH` threads, so the writers of runs
and events (the SQLite write token, PostgreSQL's row locks) wait for at most one batch. Every API
process runs the loop, so `/metrics` of each counts what it removed; on PostgreSQL a
transaction-scoped advisory lock lets one process purge at a time (the others skip that round
instead of deleting the same rows), and the threads are locked before they are checked a second
time, so a run created in one of them meanwhile keeps it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, and_, bindparam, exists, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.expression import BindParameter

from atrium.db.engine import Database
from atrium.db.models import Run, Thread
from atrium.kit.repeating import Repeating
from atrium.kit.time import utcnow
from atrium.observability.metrics import Metrics
from atrium.settings import Settings
from atrium.threads.deletion import DeletedRows, delete_thread_rows

log = logging.getLogger("atrium.retention")

# Threads per transaction: a thread of 200 runs is a few thousand rows, a few ms to delete.
_BATCH = 20
# Any constant that no other advisory lock of the database uses: "atrium-r" in ASCII.
_LOCK_KEY = 0x617472_69756D2D72

_THREADS = cast(Table, Thread.__table__)
_RUNS = cast(Table, Run.__table__)
_CUTOFF: BindParameter[datetime] = bindparam("b_cutoff")
# A run of the thread that keeps it: unfinished, or finished after the cutoff.
_KEEPS_IT = exists().where(
    _RUNS.c.thread_id == _THREADS.c.id,
    or_(_RUNS.c.finished_at.is_(None), _RUNS.c.finished_at >= _CUTOFF),
)
_EXPIRED = and_(_THREADS.c.created_at < _CUTOFF, ~_KEEPS_IT)
_OLDEST_EXPIRED = (
    select(_THREADS.c.id).where(_EXPIRED).order_by(_THREADS.c.created_at).limit(_BATCH)
)


def purge_batch(session: Session, *, cutoff: datetime, locking: bool) -> DeletedRows:
    """Delete up to `_BATCH` expired threads in the caller's transaction."""
    conn = session.connection()
    params = {"b_cutoff": cutoff}
    if not locking:  # SQLite: the transaction holds the process's only write connection
        ids = list(conn.scalars(_OLDEST_EXPIRED, params))
        return delete_thread_rows(session, ids)
    if not conn.scalar(select(func.pg_try_advisory_xact_lock(_LOCK_KEY))):
        return DeletedRows({})  # another process is purging
    candidates = list(
        conn.scalars(_OLDEST_EXPIRED.with_for_update(of=_THREADS, skip_locked=True), params)
    )
    # Locked now, so no run can be added to them before commit (its insert would wait for the
    # lock); a run added between the first read and the lock shows in this second one.
    ids = list(
        conn.scalars(select(_THREADS.c.id).where(_THREADS.c.id.in_(candidates), _EXPIRED), params)
    )
    return delete_thread_rows(session, ids)


class Retention:
    """The purge loop of one process (started by the app's lifespan when retention is on)."""

    def __init__(
        self,
        settings: Settings,
        db: Database,
        metrics: Metrics,
        *,
        now: Callable[[], datetime] = utcnow,
    ) -> None:
        self.settings = settings
        self.db = db
        self.metrics = metrics
        self.now = now
        self._loop = Repeating(
            "atrium-retention",
            self.purge,
            seconds=lambda: settings.retention_interval_seconds,
            log=log,
            failure="deleting expired threads failed; trying again later",
        )

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    async def purge(self) -> dict[str, int]:
        """Delete every expired thread, batch by batch; the rows deleted per table."""
        days = self.settings.retention_days
        if days <= 0:
            return {}
        cutoff = self.now() - timedelta(days=days)
        locking = not self.db.sqlite
        total: dict[str, int] = {}
        while True:
            deleted = await self.db.write_sync(
                lambda session: purge_batch(session, cutoff=cutoff, locking=locking)
            )
            for table, count in deleted.counts.items():
                if count:
                    self.metrics.retention_deleted.labels(table=table).inc(count)
                    total[table] = total.get(table, 0) + count
            if deleted.threads < _BATCH:
                break
        if total:
            log.info("retention deleted %d threads older than %g days", total["threads"], days)
        return total
