"""Rules of files: an upload is checked whole before anything of it is kept, then its bytes
are stored, then its row; a deletion removes the row, then the bytes."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from starlette.requests import Request

from atrium.db.engine import Database
from atrium.db.models import StoredFile
from atrium.files import repository
from atrium.files.errors import FileNotFound, FileRefused
from atrium.files.sniffing import Mismatch, allowed, sniffed_type
from atrium.files.storage import store_of
from atrium.files.upload import Upload, read_upload
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import known_id, new_id
from atrium.kit.time import utcnow
from atrium.settings import Settings

log = logging.getLogger("atrium.files")
DATABASE = "database"


@dataclass(frozen=True, slots=True)
class FilePage:
    rows: list[StoredFile]
    next_cursor: str | None


def _checked_type(settings: Settings, upload: Upload) -> str:
    try:
        content_type = sniffed_type(
            upload.head, filename=upload.filename, declared=upload.declared, text=upload.text
        )
    except Mismatch as exc:
        raise FileRefused(f"file {upload.filename!r} is refused: {exc}") from None
    if not allowed(content_type, settings.file_allowed_types):
        raise FileRefused(
            f"file {upload.filename!r} is {content_type}, which is not allowed; allowed: "
            + ", ".join(settings.file_allowed_types),
            content_type=content_type,
        )
    return content_type


async def upload_file(
    db: Database, request: Request, *, settings: Settings, account_id: int
) -> StoredFile:
    """Read, check and store the request's file. Nothing is kept of a refused one."""
    upload = await read_upload(request, max_bytes=settings.file_max_bytes)
    try:
        content_type = _checked_type(settings, upload)
        return await _stored(db, settings, upload, account_id=account_id, content_type=content_type)
    finally:
        upload.close()


async def _stored(
    db: Database, settings: Settings, upload: Upload, *, account_id: int, content_type: str
) -> StoredFile:
    file_id = new_id("file")
    store = store_of(settings)
    content: bytes | None = None
    if store is None:
        upload.spool.seek(0)
        content = upload.spool.read()
    else:
        await store.put(file_id, upload.spool)
    row = StoredFile(
        id=file_id,
        account_id=account_id,
        filename=upload.filename,
        content_type=content_type,
        size_bytes=upload.size,
        sha256=upload.sha256,
        storage=DATABASE if store is None else store.kind,
        content=content,
        created_at=utcnow(),
    )
    try:
        async with db.transaction() as session:
            session.add(row)
    except BaseException:
        if store is not None:  # the bytes of a row that never committed
            with contextlib.suppress(Exception):
                await store.delete(file_id)
        raise
    return row


async def get_file(db: Database, *, account_id: int, file_id: str) -> StoredFile:
    async with db.session(write=False) as session:
        found = await repository.get(
            session, account_id=account_id, file_id=known_id(file_id, FileNotFound)
        )
    if found is None:
        raise FileNotFound(file_id)
    return found


async def list_files(db: Database, *, account_id: int, limit: int, cursor: str | None) -> FilePage:
    after = decode_cursor(cursor) if cursor else None
    async with db.session(write=False) as session:
        rows = await repository.list_page(session, account_id=account_id, limit=limit, after=after)
    page, next_cursor = split_page(rows, limit)
    return FilePage(list(page), next_cursor)


async def content_chunks(
    db: Database, settings: Settings, *, account_id: int, file_id: str
) -> tuple[StoredFile, AsyncIterator[bytes]]:
    """The file and its bytes, in chunks (from the database: one chunk)."""
    async with db.session(write=False) as session:
        found = await repository.get(
            session, account_id=account_id, file_id=known_id(file_id, FileNotFound), content=True
        )
    if found is None:
        raise FileNotFound(file_id)
    return found, chunks_of(settings, found)


async def chunks_of(settings: Settings, row: StoredFile) -> AsyncIterator[bytes]:
    if row.storage == DATABASE:
        yield row.content or b""
        return
    store = store_of(settings)
    if store is None or store.kind != row.storage:
        raise RuntimeError(f"file {row.id} is in {row.storage} storage, which is not configured")
    async for chunk in store.chunks(row.id):
        yield chunk


async def delete_file(db: Database, settings: Settings, *, account_id: int, file_id: str) -> str:
    """Delete the row, then the bytes: a crash between the two leaves bytes nobody can reach,
    never a row without its bytes."""
    async with db.transaction() as session:
        found = await repository.remove(
            session, account_id=account_id, file_id=known_id(file_id, FileNotFound)
        )
    if found is None:
        raise FileNotFound(file_id)
    if found.storage != DATABASE:
        store = store_of(settings)
        if store is not None and store.kind == found.storage:
            try:
                await store.delete(found.id)
            except Exception:
                log.exception(
                    "file %s: its bytes could not be deleted from %s", found.id, store.kind
                )
    return found.id
