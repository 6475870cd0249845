"""Every SQLite connection of a process gets the page cache of `ATRIUM_SQLITE_CACHE_KIB`: the
request pools, the write batcher's thread and the point reader alike (11 connections, so the
setting bounds the process's SQLite memory)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.settings import Settings


def _cache_size(connection: Connection | Session) -> int:
    return int(connection.execute(text("PRAGMA cache_size")).scalar_one())


async def test_each_connection_has_the_configured_page_cache(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cache.db'}"
    db = Database(Settings(database_url=url, sqlite_cache_kib=300, _env_file=None))
    try:
        async with db.session(write=False) as reader:
            assert (await reader.execute(text("PRAGMA cache_size"))).scalar_one() == -300
        async with db.transaction() as writer:
            assert (await writer.execute(text("PRAGMA cache_size"))).scalar_one() == -300
        assert await db.write_sync(_cache_size) == -300
        assert await db.point_read(_cache_size) == -300
    finally:
        await db.dispose()
