"""The sweep of bytes that no file row names, in the `disk` and `s3` stores.

How such bytes come about: an upload stores the bytes, then inserts the row
(`service._stored`), and deletes the bytes itself when the insert fails, but a process killed
between the two leaves them; a deletion removes the row, then the bytes, and a crash between
leaves them too; deleting an account removes its files' rows by cascade and never touches a
store; a disk write cut short leaves its temporary (`.upload-…`). Nothing would ever read
them, so nothing would ever delete them.

Every API process sweeps when it starts and then every `SWEEP_SECONDS` (`FileSweep`, started
by the app when files live outside the database): it lists the store and deletes each file key
last written before `now - GRACE` that has no row, and each temporary as old. The grace keeps
an upload in flight safe, since its bytes are stored before its row commits: a day is far
longer than the gap between the two (and than any upload: an S3 object uploaded in parts is
dated by when its upload began). Rows are looked up a listing chunk at a time, so memory stays
flat with a bucket of millions. Keys that are not file ids are someone else's and left alone;
processes sweeping at once delete the same keys, and deleting a missing key is no error.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Final

from atrium.db.engine import Database
from atrium.files import repository
from atrium.files.storage import LISTING_CHUNK, TEMPORARY_PREFIX, BlobStore, store_of
from atrium.kit.repeating import Repeating
from atrium.kit.time import utcnow
from atrium.settings import Settings

log = logging.getLogger("atrium.files")

GRACE: Final = timedelta(days=1)
SWEEP_SECONDS: Final = 3600.0
# What `new_id("file")` makes: the keys this store writes.
_FILE_KEY = re.compile(r"^file_[A-Za-z0-9]{1,35}$")


async def sweep(db: Database, store: BlobStore, *, now: datetime) -> list[str]:
    """Delete the store's keys older than `now - GRACE` that no row names; the keys deleted."""
    cutoff = now - GRACE
    deleted: list[str] = []
    candidates: list[str] = []
    async for stored in store.listing():
        if stored.modified >= cutoff:
            continue
        if stored.key.startswith(TEMPORARY_PREFIX):  # a write that never finished
            await store.delete(stored.key)
            deleted.append(stored.key)
        elif _FILE_KEY.match(stored.key):
            candidates.append(stored.key)
            if len(candidates) >= LISTING_CHUNK:
                deleted += await _without_rows(db, store, candidates)
                candidates = []
    deleted += await _without_rows(db, store, candidates)
    return deleted


async def _without_rows(db: Database, store: BlobStore, keys: list[str]) -> list[str]:
    if not keys:
        return []
    async with db.session(write=False) as session:
        kept = await repository.existing(session, keys)
    gone = [key for key in keys if key not in kept]
    for key in gone:
        await store.delete(key)
    return gone


class FileSweep:
    """The sweep loop of one process (started by the app's lifespan for `disk` and `s3`)."""

    def __init__(
        self, settings: Settings, db: Database, *, now: Callable[[], datetime] = utcnow
    ) -> None:
        self.settings = settings
        self.db = db
        self.now = now
        self._loop = Repeating(
            "atrium-file-sweep",
            self.sweep,
            seconds=lambda: SWEEP_SECONDS,
            log=log,
            failure="sweeping file bytes without a row failed; trying again later",
        )

    def start(self) -> None:
        self._loop.start()

    async def stop(self) -> None:
        await self._loop.stop()

    async def sweep(self) -> list[str]:
        store = store_of(self.settings)
        if store is None:
            return []
        deleted = await sweep(self.db, store, now=self.now())
        if deleted:
            log.info("deleted %d stored files that no file row names", len(deleted))
        return deleted
