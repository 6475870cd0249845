"""Expired memory items deleted now and then by every API process.

Reads never return an expired item (each filters on `expires_at`); this only gives the rows
back. Done here rather than in each put, which then writes only its own rows
(docs/decisions/0058-memory.md, "Cost of a put").
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Final

from atrium.db.engine import Database
from atrium.kit.repeating import Repeating
from atrium.kit.time import utcnow
from atrium.memory import repository, service
from atrium.settings import Settings

log = logging.getLogger("atrium.memory")

# Items deleted per transaction: SQLite's writers wait for each one, so each stays short.
PURGE_BATCH: Final = 500


async def purge_expired(db: Database, *, now: datetime) -> int:
    """Delete every item expired at `now`, `PURGE_BATCH` a transaction; how many."""
    total = 0
    while True:
        deleted = await service.in_transaction(
            db, lambda session: repository.purge_expired(session, now=now, limit=PURGE_BATCH)
        )
        total += deleted
        if deleted < PURGE_BATCH:
            return total


class MemoryPurge:
    """The purge loop of one process (started by the app's lifespan): every
    ATRIUM_MEMORY_PURGE_SECONDS, the first one that long after start."""

    def __init__(
        self, settings: Settings, db: Database, *, now: Callable[[], datetime] = utcnow
    ) -> None:
        self.db = db
        self.now = now
        self._loop = Repeating(
            "atrium-memory-purge",
            self.purge,
            seconds=lambda: settings.memory_purge_seconds,
            log=log,
            failure="deleting expired memory items failed; trying again later",
            # Reads never return an expired item, so nothing is urgent at start: a round then
            # would be a write and a database connection at every process start.
            wait_first=True,
        )

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    async def purge(self) -> int:
        return await purge_expired(self.db, now=self.now())
