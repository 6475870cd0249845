"""An aiosqlite connection whose statements cost one thread hop instead of four.

aiosqlite runs every sqlite3 call on the connection's own thread, and SQLAlchemy's adapter makes
four such calls per statement (create the cursor, execute, fetch the rows, close the cursor),
each a round trip through a queue, a thread wake-up and `call_soon_threadsafe`. On a busy
machine every wake-up waits for the scheduler, so these hops, not SQLite, dominated the cost of
a statement. This cursor does all four in one call on the connection's thread and hands the
buffered rows to SQLAlchemy; the sqlite3 calls and their semantics are unchanged.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable
from functools import partial
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import dialect as aiosqlite_dialect
from sqlalchemy.engine import make_url

_Description = tuple[tuple[Any, ...], ...] | None


def _run(
    conn: sqlite3.Connection, sql: str, parameters: Any, many: bool
) -> tuple[_Description, list[Any], int, int | None]:
    cursor = conn.cursor()
    try:
        if many:
            cursor.executemany(sql, parameters)
        else:
            cursor.execute(sql, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneHopCursor:
    """The parts of aiosqlite's `Cursor` that SQLAlchemy uses, over pre-fetched results."""

    arraysize = 1

    def __init__(self, conn: OneHopConnection) -> None:
        self._conn = conn
        self._description: _Description = None
        self._rows: deque[Any] = deque()
        self._rowcount = -1
        self._lastrowid: int | None = None

    async def __aenter__(self) -> OneHopCursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        return None

    async def _call(self, sql: str, parameters: Any, *, many: bool) -> OneHopCursor:
        found = await self._conn.run_in_thread(_run, sql, parameters, many)
        self._description, rows, self._rowcount, self._lastrowid = found
        self._rows = deque(rows)
        return self

    async def execute(self, sql: str, parameters: Iterable[Any] | None = None) -> OneHopCursor:
        return await self._call(sql, [] if parameters is None else parameters, many=False)

    async def executemany(self, sql: str, parameters: Iterable[Iterable[Any]]) -> OneHopCursor:
        return await self._call(sql, parameters, many=True)

    async def fetchone(self) -> Any:
        return self._rows.popleft() if self._rows else None

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        count = self.arraysize if size is None else size
        return [self._rows.popleft() for _ in range(min(count, len(self._rows)))]

    async def fetchall(self) -> list[Any]:
        rows, self._rows = list(self._rows), deque()
        return rows

    async def close(self) -> None:
        self._rows.clear()

    @property
    def description(self) -> _Description:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._lastrowid


class OneHopConnection(aiosqlite.Connection):
    def cursor(self) -> OneHopCursor:  # type: ignore[override]
        return OneHopCursor(self)

    async def run_in_thread(self, fn: Any, *args: Any) -> Any:
        """`fn(sqlite3_connection, *args)` on the connection's thread."""
        return await self._execute(partial(fn, self._conn, *args))  # type: ignore[no-untyped-call]


class InlineConnection(OneHopConnection):
    """Runs its sqlite3 calls on the event loop's thread: no hop at all.

    Only for the read pool. In WAL mode a reader never waits for the writer (nor for another
    process's write lock), so a read is a few microseconds of SQLite plus building the rows,
    which takes the GIL in either thread; the hop to a thread and back cost more than the read.
    Writers keep their thread: `BEGIN IMMEDIATE` may wait up to `busy_timeout` for another
    process, which must never stall the event loop.
    """

    async def _execute(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._running or not self._connection:
            raise ValueError("Connection closed")
        return fn(*args, **kwargs)


def async_creator(url: str, *, inline: bool = False) -> Any:
    """An `async_creator` for `create_async_engine`, with the URL's usual connect arguments
    (`check_same_thread=False` included, which `InlineConnection` relies on)."""
    args, kwargs = aiosqlite_dialect().create_connect_args(make_url(url))
    database: str = args[0] if args else kwargs.pop("database")
    kind = InlineConnection if inline else OneHopConnection

    async def connect() -> OneHopConnection:
        connection = kind(partial(sqlite3.connect, database, **kwargs), 64)
        # Like SQLAlchemy's own aiosqlite connect: never keep the process alive at exit.
        connection._thread.daemon = True
        await connection
        return connection

    return connect
