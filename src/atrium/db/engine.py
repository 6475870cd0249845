"""Engines and session factories for SQLite (embedded) and PostgreSQL (scale-out).

SQLite allows one writer at a time. Rather than letting writers spin on `busy_timeout`, the
write engine has a single pooled connection whose transactions start with `BEGIN IMMEDIATE`:
writers in this process queue on the pool (an asyncio wait, not a sleep loop), the write lock is
taken up front (so a read-then-write transaction can never fail to upgrade), and `busy_timeout`
covers the other processes (CLI, extra workers). Reads go through a separate pool and see the
last committed state through WAL without blocking the writer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from atrium.settings import Settings

T = TypeVar("T")


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def _sqlite_engine(settings: Settings, *, writer: bool) -> AsyncEngine:
    engine = create_async_engine(
        settings.database_url,
        pool_size=1 if writer else 8,
        max_overflow=0,
        pool_timeout=60,
        # Parameters are account data (prompts, names, key hashes): never in an error's log line.
        hide_parameters=True,
        # A returned connection is rolled back by `_rollback_if_in_transaction` below instead.
        pool_reset_on_return=None,
    )
    _configure_sqlite(engine.sync_engine, settings, writer=writer)
    event.listen(engine.sync_engine, "reset", _rollback_if_in_transaction)
    return engine


def _rollback_if_in_transaction(dbapi_connection: Any, _record: Any, state: Any) -> None:
    """The pool's reset of a returned aiosqlite connection, skipped when no transaction is open.

    `sqlite3`'s rollback does nothing then, but aiosqlite hands even that to its thread and
    back; and the connection of `Database.write_sync`'s write token, checked out and returned
    with no statement run, comes back that way after every batch of writes (0.9% of the
    server's samples in a streaming burst, on the event loop alone;
    docs/decisions/0007-three-ways-to-the-database.md). `in_transaction` is
    sqlite3's own flag, read without the thread. Otherwise as the pool's own rollback on
    return: not for a connection `Connection.close` already rolled back, nor where the pool
    may not await (`asyncio_safe` false: a connection collected outside the event loop).
    """
    if state.transaction_was_reset or not state.asyncio_safe:
        return
    if dbapi_connection.driver_connection.in_transaction:
        dbapi_connection.rollback()


def _sqlite_sync_writer(settings: Settings) -> Engine:
    """The same database through the plain `sqlite3` driver, for whole transactions run in one
    thread (see `Database.write_sync`)."""
    url = make_url(settings.database_url).set(drivername="sqlite+pysqlite")
    engine = create_engine(url, pool_size=1, max_overflow=0, hide_parameters=True)
    _configure_sqlite(engine, settings, writer=True)
    return engine


def _configure_sqlite(
    engine: Engine, settings: Settings, *, writer: bool, transactions: bool = True
) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin (see the `begin` hook).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(settings.sqlite_busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        # For the whole process, so each new connection sets the same value again. Over the
        # limit, a page cache recycles its least recently used page rather than allocate
        # another: a WAL reader drops its cache whenever another connection has committed and
        # refilled it, chunk by chunk, between its thread's other allocations; the free space
        # left between them grew the heaps for hours
        # (docs/decisions/0001-sqlite-soft-heap-limit.md).
        cursor.execute(f"PRAGMA soft_heap_limit={int(settings.sqlite_soft_heap_limit_bytes)}")
        cursor.close()

    if not transactions:
        return  # autocommit: each statement reads the latest committed state on its own

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")


class Database:
    """The engines of one process and the sessions made from them."""

    def __init__(self, settings: Settings) -> None:
        self.url = settings.database_url
        self.sqlite = is_sqlite(self.url)
        if self.sqlite:
            self.write_engine = _sqlite_engine(settings, writer=True)
            self.read_engine = _sqlite_engine(settings, writer=False)
        else:
            self.write_engine = create_async_engine(
                self.url,
                pool_size=settings.db_pool_size,
                max_overflow=settings.db_pool_size,
                pool_timeout=settings.db_pool_timeout_seconds,
                pool_pre_ping=True,
                hide_parameters=True,
            )
            self.read_engine = self.write_engine
        self._writer = async_sessionmaker(self.write_engine, expire_on_commit=False)
        # PostgreSQL: `write_sync` (the write batcher: one transaction at a time) has connections
        # of its own, so a burst of requests queueing on the main pool cannot starve the batch
        # those requests are waiting for.
        self._batch_engine = (
            None
            if self.sqlite
            else create_async_engine(
                self.url, pool_size=2, max_overflow=0, pool_pre_ping=True, hide_parameters=True
            )
        )
        self._reader = async_sessionmaker(self.read_engine, expire_on_commit=False)
        # PostgreSQL: `point_read`'s single SELECTs on connections of their own, in autocommit.
        # asyncpg's pool ping runs in a transaction of its own unless the connection is in
        # autocommit (BEGIN, the ping, ROLLBACK), and a statement on the main pool runs in one
        # too: six round trips for one read, three of them the ping's. Here two (the ping and
        # the SELECT), and 40% less CPU per read. A single statement needs no transaction: as
        # SQLite's point reader, it reads the latest committed state on its own (READ COMMITTED
        # takes a snapshot per statement anyway; docs/decisions/0007-three-ways-to-the-database.md).
        self.point_engine = (
            None
            if self.sqlite
            else create_async_engine(
                self.url,
                pool_size=settings.db_pool_size,
                max_overflow=0,
                pool_timeout=settings.db_pool_timeout_seconds,
                pool_pre_ping=True,
                hide_parameters=True,
                isolation_level="AUTOCOMMIT",
            )
        )
        # SQLite: synchronous write transactions run whole in one thread (`write_sync`).
        self._sync_engine: Engine | None = None
        self._sync_writer: sessionmaker[Session] | None = None
        self._point_reader: Connection | None = None
        self._thread: ThreadPoolExecutor | None = None
        self._settings = settings

    def session(self, *, write: bool = True) -> AsyncSession:
        """A new session; `write=False` may read from a replica-like pool (SQLite: no lock)."""
        return (self._writer if write else self._reader)()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write session that commits on success and rolls back on error."""
        async with self.session() as session, session.begin():
            yield session

    async def write_sync(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one write transaction, committed on success, rolled back on error.

        `work` is synchronous: on SQLite the whole transaction runs in a thread of its own on
        the plain `sqlite3` driver, one hand-off instead of several per statement (aiosqlite
        hands every cursor, execute, fetch and close to its thread and back; under load each
        hand-off waits for a turn of the busy event loop, and the one write connection stayed
        busy for that long). The async write engine's single connection is held meanwhile: it
        is the process's write token, so request transactions and these take turns instead of
        spinning on SQLite's busy handler. On PostgreSQL `work` runs through the async session.
        """
        if self._batch_engine is not None:
            async with (
                AsyncSession(self._batch_engine, expire_on_commit=False) as session,
                session.begin(),
            ):
                return await session.run_sync(work)
        if self._sync_writer is None:
            self._sync_engine = _sqlite_sync_writer(self._settings)
            self._sync_writer = sessionmaker(self._sync_engine, expire_on_commit=False)
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="atrium-sqlite-writer")
        writer = self._sync_writer

        def transaction() -> T:
            with writer() as session, session.begin():
                return work(session)

        async with self.write_engine.connect():  # the write token
            done = asyncio.get_running_loop().run_in_executor(self._thread, transaction)
            try:
                return await asyncio.shield(done)
            except asyncio.CancelledError:
                # The thread finishes its transaction regardless; keep the token until it has.
                await asyncio.wait([done])
                raise

    async def point_read(self, work: Callable[[Connection], T]) -> T:
        """Run `work`: one synchronous SELECT (Core) of a few rows found through an index.

        Only for point lookups bounded by an index and a LIMIT (the API key of every request,
        a run and its events). On SQLite they run right here on the event loop, on one
        autocommit connection of the plain `sqlite3` driver: microseconds of C, where aiosqlite
        makes four thread hand-offs per statement (each a turn of the event loop and of the
        GIL: a stream open spent more CPU handing off than querying). WAL readers never wait
        for the writer. Anything that may scan goes through `session(write=False)`, off the
        loop. On PostgreSQL `work` runs on an autocommit connection of `point_engine`'s pool.
        """
        if self.point_engine is not None:
            async with self.point_engine.connect() as conn:
                return await conn.run_sync(work)
        reader = self._sqlite_point_reader()
        try:
            return work(reader)
        except DBAPIError:
            self._point_reader = None  # a fresh one next time
            reader.invalidate()
            raise

    def _sqlite_point_reader(self) -> Connection:
        if self._point_reader is None:
            url = make_url(self.url).set(drivername="sqlite+pysqlite")
            engine = create_engine(url, poolclass=NullPool, hide_parameters=True)
            _configure_sqlite(engine, self._settings, writer=False, transactions=False)
            self._point_reader = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._point_reader

    def point_read_engine(self) -> Engine:
        """The synchronous engine `point_read` runs on, for observers of its statements (the
        tests that count a request's queries)."""
        if self.point_engine is not None:
            return self.point_engine.sync_engine
        return self._sqlite_point_reader().engine

    async def ping(self) -> None:
        async with self.read_engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        if self._batch_engine is not None:
            await self._batch_engine.dispose()
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None
        if self._sync_engine is not None:
            self._sync_engine.dispose()
            self._sync_engine = self._sync_writer = None
        if self._point_reader is not None:
            self._point_reader.close()
            self._point_reader.engine.dispose()
            self._point_reader = None
        if self.point_engine is not None:
            await self.point_engine.dispose()
        await self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            await self.read_engine.dispose()
