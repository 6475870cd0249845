"""`Database.point_read`: one SELECT that is its own transaction, on both backends.

SQLite's point reader and PostgreSQL's point pool are in autocommit: no BEGIN and ROLLBACK
around the statement (on PostgreSQL, with the pool's ping, four round trips fewer a read: the
API key of every request is read this way)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, text

from atrium.db.engine import Database


async def test_a_point_read_is_its_own_transaction(db: Database) -> None:
    def in_a_transaction(connection: Connection) -> bool:
        """Whether the driver says a transaction is open after the SELECT (a BEGIN before it,
        even a deferred one on SQLite, would have opened one)."""
        connection.execute(text("SELECT 1"))
        driver: Any = connection.connection.driver_connection
        return bool(driver.in_transaction if db.sqlite else driver.is_in_transaction())

    assert await db.point_read(in_a_transaction) is False
