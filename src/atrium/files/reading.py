"""A run's input file, read from where its bytes are stored when the run needs them.

Images and PDFs are read whole: the model is given their bytes, which the upload cap bounds.
Text is read a range at a time and decoded as it arrives (an incremental UTF-8 decoder, so a
character split across two ranges is decoded whole), keeping only the characters asked for:
the model is given at most the inline budget and `read_file` a page, whatever the file's size,
so the worker holds a range and a page, never the file. From the disk store a range is a seek
and reads, from S3 one ranged GET streamed, from the database a range of the blob per query.

The number of characters the file has (what the model is told is left to read) needs every
byte once: the first read goes on to the end, counting, and remembers where each of its ranges
began (character and byte), so a later read starts from the range its offset falls in.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import sqlite3
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Protocol

from sqlalchemy import Engine, LargeBinary, func, literal_column, select
from sqlalchemy.orm import InstrumentedAttribute

from atrium.db.engine import Database
from atrium.files.storage import BlobStore

RANGE_BYTES = 1_048_576


class FileGone(Exception):
    """The file's bytes are no longer stored (deleted since the run read its row)."""


class ByteSource(Protocol):
    """A stored file's bytes."""

    async def whole(self) -> bytes: ...

    def chunks_from(self, start: int) -> AsyncGenerator[bytes, None]:
        """The bytes from `start` on, a range at a time; `FileGone` when they are gone."""
        ...


@dataclass(frozen=True, slots=True)
class StoreSource:
    """A file of the disk or S3 store."""

    store: BlobStore
    key: str
    size: int

    async def whole(self) -> bytes:
        try:
            return await self.store.read(self.key)
        except FileNotFoundError as exc:
            raise FileGone(self.key) from exc

    async def chunks_from(self, start: int) -> AsyncGenerator[bytes, None]:
        if start >= self.size:  # S3 refuses a range that starts past the end
            return
        try:
            async for chunk in self.store.chunks_from(self.key, start, RANGE_BYTES):
                yield chunk
        except FileNotFoundError as exc:
            raise FileGone(self.key) from exc


@dataclass(frozen=True, slots=True)
class DatabaseSource:
    """A blob in a row (a file stored in the database, an artifact): `column` of the row
    whose `key_column` is `key`. On PostgreSQL each range is a `substring` of the bytea; on
    SQLite, whose `substr` would load the whole blob into its own memory first, each range is
    read through SQLite's incremental blob I/O (`sqlite3.Connection.blobopen`)."""

    db: Database
    column: InstrumentedAttribute[bytes] | InstrumentedAttribute[bytes | None]
    key_column: InstrumentedAttribute[str]
    key: str

    async def whole(self) -> bytes:
        async with self.db.session(write=False) as session:
            found: bytes | None = await session.scalar(
                select(self.column).where(self.key_column == self.key)
            )
        if found is None:
            raise FileGone(self.key)
        return found

    async def chunks_from(self, start: int) -> AsyncGenerator[bytes, None]:
        position = start
        # Made on the event loop's thread, which its connection belongs to, before any read.
        engine = self.db.point_read_engine() if self.db.sqlite else None
        while True:
            if engine is not None:
                chunk = await asyncio.to_thread(self._sqlite_range, engine, position)
            else:
                chunk = await self._range(position)
            if chunk is None:
                raise FileGone(self.key)
            if chunk:
                yield chunk
            if len(chunk) < RANGE_BYTES:
                return
            position += len(chunk)

    async def _range(self, position: int) -> bytes | None:
        # substr counts from 1, in bytes for a bytea.
        piece = func.substr(self.column, position + 1, RANGE_BYTES, type_=LargeBinary)
        async with self.db.session(write=False) as session:
            found: bytes | None = await session.scalar(
                select(piece).where(self.key_column == self.key)
            )
        return None if found is None else bytes(found)

    def _sqlite_range(self, engine: Engine, position: int) -> bytes | None:
        """A range of the blob, on a connection of this thread's own."""
        column = self.column.expression
        table = self.column.class_.__table__
        with engine.connect() as conn:
            # One snapshot (WAL): the blob opened is the row found, whatever commits meanwhile.
            conn.exec_driver_sql("BEGIN")
            rowid = conn.scalar(
                select(literal_column("rowid"))
                .select_from(table)
                .where(self.key_column == self.key)
            )
            if rowid is None:
                return None
            sqlite = conn.connection.driver_connection
            assert isinstance(sqlite, sqlite3.Connection)
            with sqlite.blobopen(table.name, column.name, rowid, readonly=True) as blob:
                blob.seek(min(position, len(blob)))
                return blob.read(RANGE_BYTES)


@dataclass(slots=True)
class FileContent:
    """A given file's bytes, read when needed; for text, where its ranges begin (character:
    byte, from 0) and its number of characters once counted."""

    source: ByteSource
    marks: dict[int, int] = field(default_factory=lambda: {0: 0})
    characters: int | None = None

    async def whole(self) -> bytes:
        return await self.source.whole()

    async def text(self, start: int, count: int) -> tuple[str, int]:
        """Up to `count` characters of the file as UTF-8 text (undecodable bytes replaced)
        from character `start`, and the number of characters the file has."""
        end = start + max(count, 0)
        if self.characters is not None and end <= start:
            return "", self.characters
        char = max(at for at in self.marks if at <= start)
        byte = self.marks[char]
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pieces: list[str] = []
        async with contextlib.aclosing(self.source.chunks_from(byte)) as chunks:
            async for chunk in chunks:
                byte += len(chunk)
                text = decoder.decode(chunk)
                _take(text, char, start, end, pieces)
                char += len(text)
                pending, _ = decoder.getstate()
                self.marks.setdefault(char, byte - len(pending))
                if char >= end and self.characters is not None:
                    break
            else:
                text = decoder.decode(b"", final=True)
                _take(text, char, start, end, pieces)
                self.characters = char + len(text)
        assert self.characters is not None
        return "".join(pieces), self.characters


def _take(text: str, char: int, start: int, end: int, pieces: list[str]) -> None:
    """Keep what of `text` (the characters from `char` on) falls in [start, end)."""
    low, high = max(start, char), min(end, char + len(text))
    if high > low:
        pieces.append(text[low - char : high - char])
