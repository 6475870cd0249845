"""The SQL statements the app runs while a test watches, for tests that count or read them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine


@dataclass(frozen=True, slots=True)
class Statement:
    sql: str  # as sent, whitespace and all
    many: bool  # executemany: one statement for several rows
    # The asyncio task that ran it; None in a thread without an event loop (SQLite's writer).
    task: asyncio.Task[Any] | None

    @property
    def text(self) -> str:
        """The SQL on one line, runs of whitespace as one space."""
        return " ".join(self.sql.split())


@contextmanager
def recorded(*engines: Any) -> Iterator[list[Statement]]:
    """Every statement run on `engines` (sync engines; default: every engine of the process)
    until the block ends, in order."""
    seen: list[Statement] = []

    def record(*args: Any) -> None:
        try:
            task = asyncio.current_task()
        except RuntimeError:  # a thread without an event loop
            task = None
        seen.append(Statement(str(args[2]), bool(args[5]), task))

    targets = engines or (Engine,)
    for target in targets:
        event.listen(target, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        for target in targets:
            event.remove(target, "before_cursor_execute", record)
