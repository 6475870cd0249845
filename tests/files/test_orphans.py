"""Stored file bytes that no row names (a crash between a row and its bytes) are swept."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import delete

from atrium.db.engine import Database
from atrium.db.models import StoredFile
from atrium.files import storage
from atrium.files.orphans import GRACE, FileSweep
from tests.files.helpers import FILES, uploaded
from tests.files.test_s3_store import BUCKET, _client, _objects, s3_url

__all__ = ["s3_url"]

_TWO_DAYS = 2 * 24 * 3600
# Past the grace: an object's age cannot be set in a bucket, so the sweep's clock moves.
_PAST_GRACE = GRACE + timedelta(hours=1)


@pytest.fixture
def settings_overrides(tmp_path: Path) -> dict[str, object]:
    return {"file_storage": "disk", "file_dir": tmp_path / "files"}


async def _lose_row(db: Database, file_id: str) -> None:
    """What a crash between a deletion's row and its bytes leaves: the bytes alone."""
    async with db.session() as session:
        await session.execute(delete(StoredFile).where(StoredFile.id == file_id))
        await session.commit()


def _age(path: Path) -> None:
    old = time.time() - _TWO_DAYS
    os.utime(path, (old, old))


async def test_bytes_without_a_row_go_after_a_day_and_nothing_else_does(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database, tmp_path: Path
) -> None:
    folder = tmp_path / "files"
    kept = await uploaded(client, auth, "kept.md", b"# kept\n")
    lost = await uploaded(client, auth, "lost.md", b"# lost\n")
    recent = await uploaded(client, auth, "recent.md", b"# recent\n")
    await _lose_row(db, lost["file_id"])
    await _lose_row(db, recent["file_id"])  # bytes without a row, but written just now
    (folder / ".upload-cut-short").write_bytes(b"half a file")  # a write killed mid-way
    (folder / "notes.txt").write_bytes(b"not ours")  # not a file id: someone else's
    for name in (kept["file_id"], lost["file_id"], ".upload-cut-short", "notes.txt"):
        _age(folder / name)

    sweep = app.state.file_sweep
    assert isinstance(sweep, FileSweep)  # the app's own loop, started by its lifespan
    deleted = await sweep.sweep()

    assert sorted(deleted) == sorted([lost["file_id"], ".upload-cut-short"])
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        [kept["file_id"], recent["file_id"], "notes.txt"]
    )
    content = await client.get(f"{FILES}/{kept['file_id']}/content", headers=auth)
    assert content.content == b"# kept\n"
    assert await sweep.sweep() == []  # nothing left to sweep


async def test_a_sweep_reads_rows_a_chunk_at_a_time(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str], db: Database, tmp_path: Path
) -> None:
    folder = tmp_path / "files"
    kept = await uploaded(client, auth, "kept.md", b"# kept\n")
    _age(folder / kept["file_id"])
    orphans = [f"file_orphan{index:04d}" for index in range(storage.LISTING_CHUNK + 5)]
    for name in orphans:
        (folder / name).write_bytes(b"x")
        _age(folder / name)
    deleted = await app.state.file_sweep.sweep()
    assert sorted(deleted) == orphans
    assert [path.name for path in folder.iterdir()] == [kept["file_id"]]


class TestInABucket:
    @pytest.fixture
    def settings_overrides(self, s3_url: str) -> dict[str, object]:
        return {
            "file_storage": "s3",
            "file_s3_url": f"s3://{BUCKET}/uploads",
            "file_s3_endpoint": s3_url,
            "file_s3_access_key_id": "test-key",
            "file_s3_secret_access_key": "test-secret",
        }

    async def test_an_object_without_a_row_goes_a_day_after_its_upload(
        self,
        app: FastAPI,
        client: httpx.AsyncClient,
        auth: dict[str, str],
        db: Database,
        s3_url: str,
    ) -> None:
        for key in _objects(s3_url):  # an earlier test's database variant
            _client(s3_url).delete_object(Bucket=BUCKET, Key=key)
        kept = await uploaded(client, auth, "kept.md", b"# kept\n")
        lost = await uploaded(client, auth, "lost.md", b"# lost\n")
        await _lose_row(db, lost["file_id"])
        sweep: FileSweep = app.state.file_sweep
        assert await sweep.sweep() == []  # within the grace: an upload may be in flight

        later = FileSweep(sweep.settings, sweep.db, now=lambda: sweep.now() + _PAST_GRACE)
        assert await later.sweep() == [lost["file_id"]]
        assert _objects(s3_url) == [f"uploads/{kept['file_id']}"]
