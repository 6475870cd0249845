"""`ATRIUM_SQLITE_SOFT_HEAP_LIMIT_BYTES`: SQLite's page caches reuse their own pages instead of
growing (a reader's refilled page cache grows its thread's heap:
docs/decisions/0001-sqlite-soft-heap-limit.md), and 0 lifts the limit.

Run in a subprocess: the limit is SQLite's, for the whole process, and what is measured is
SQLite's own count of the memory it holds (`sqlite3_memory_used`) in a process this test shapes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# A 6 MB table (1,500 rows of 4,000 bytes: one row a page), read whole through the app's own
# reader sessions after each of a few commits through its write transactions (a commit makes
# every other connection drop its page cache and read the pages again). Prints the soft heap
# limit a reader connection reports, then SQLite's memory in use before the reads and at most
# during them, in bytes.
_READS = """
import asyncio, ctypes, ctypes.util
from sqlalchemy import text
from atrium.db.engine import Database
from atrium.settings import Settings

sqlite = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
sqlite.sqlite3_memory_used.restype = ctypes.c_int64


async def main() -> None:
    db = Database(Settings(_env_file=None))
    async with db.transaction() as session:
        await session.execute(text("CREATE TABLE pages (id INTEGER PRIMARY KEY, body BLOB)"))
        await session.execute(
            text("INSERT INTO pages (body) SELECT zeroblob(4000) FROM "
                 "(WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500) "
                 "SELECT i FROM n)")
        )
    async with db.session(write=False) as session:
        limit = (await session.execute(text("PRAGMA soft_heap_limit"))).scalar()
    before, most = sqlite.sqlite3_memory_used(), 0
    for round in range(5):
        async with db.transaction() as session:
            await session.execute(text("UPDATE pages SET body = zeroblob(4000) WHERE id = :id"),
                                  {"id": round + 1})
        async with db.session(write=False) as session:
            total = (await session.execute(text("SELECT sum(length(body)) FROM pages"))).scalar()
            assert total == 6_000_000, total
            most = max(most, sqlite.sqlite3_memory_used())
    await db.dispose()
    print(limit, before, most)


asyncio.run(main())
"""


def _reads(tmp_path: Path, limit: str | None) -> tuple[int, int, int]:
    env = {**os.environ, "ATRIUM_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/pages.db"}
    env.pop("ATRIUM_SQLITE_SOFT_HEAP_LIMIT_BYTES", None)
    if limit is not None:
        env["ATRIUM_SQLITE_SOFT_HEAP_LIMIT_BYTES"] = limit
    done = subprocess.run(
        [sys.executable, "-c", _READS], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    limit_seen, before, most = map(int, done.stdout.split())
    return limit_seen, before, most


def test_the_default_limit_keeps_the_page_caches_small(tmp_path: Path) -> None:
    limit, before, most = _reads(tmp_path, None)
    assert limit == 2 * 1024 * 1024
    # The reads go through 6 MB of pages; the reader's cache keeps reusing a few of them.
    assert most - before < 512 * 1024, (before, most)


def test_zero_lifts_the_limit(tmp_path: Path) -> None:
    limit, before, most = _reads(tmp_path, "0")
    assert limit == 0
    # SQLite's own bound is then the reader's cache_size (2,000 KiB by default): it fills up.
    assert most - before > 1536 * 1024, (before, most)
