"""Uploaded bytes in the database store: on PostgreSQL a file takes its own size, uncompressed,
so that each range a run reads is read alone (a compressed bytea is decompressed from its start
for every `substring`); on SQLite a range is read through blob I/O either way."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import text

from atrium.db.engine import Database
from tests.files.helpers import uploaded

MB = 1_048_576


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"file_storage": "database"}


async def test_a_text_file_is_stored_whole_and_uncompressed(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    if db.sqlite:
        pytest.skip("PostgreSQL: SQLite never compresses a blob")
    data = b"the same line of notes, again and again\n" * (MB // 40)
    made = await uploaded(client, auth, "notes.txt", data)
    async with db.session(write=False) as session:
        stored, size = (
            await session.execute(
                text("SELECT length(content), pg_column_size(content) FROM files WHERE id = :id"),
                {"id": made["file_id"]},
            )
        ).one()
    assert stored == len(data)
    # A compressed value of these repeated lines would take a few kilobytes.
    assert size >= len(data), (size, len(data))
