"""Engines and session factories for SQLite (embedded) and PostgreSQL (scale-out).

SQLite allows one writer at a time. Rather than letting writers spin on `busy_timeout`, the
write engine has a single pooled connection whose transactions start with `BEGIN IMMEDIATE`:
writers in this process queue on the pool (an asyncio wait, not a sleep loop), the write lock is
taken up front (so a read-then-write transaction can never fail to upgrade), and `busy_timeout`
covers the other processes (CLI, extra workers). Reads go through a separate pool and see the
last committed state through WAL without blocking the writer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from atrium.settings import Settings


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
    )

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not the driver, decide when transactions begin (see the `begin` hook).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(settings.sqlite_busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if writer else "BEGIN")

    return engine


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
                pool_pre_ping=True,
                hide_parameters=True,
            )
            self.read_engine = self.write_engine
        self._writer = async_sessionmaker(self.write_engine, expire_on_commit=False)
        self._reader = async_sessionmaker(self.read_engine, expire_on_commit=False)

    def session(self, *, write: bool = True) -> AsyncSession:
        """A new session; `write=False` may read from a replica-like pool (SQLite: no lock)."""
        return (self._writer if write else self._reader)()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A write session that commits on success and rolls back on error."""
        async with self.session() as session, session.begin():
            yield session

    async def ping(self) -> None:
        async with self.read_engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.write_engine.dispose()
        if self.read_engine is not self.write_engine:
            await self.read_engine.dispose()
