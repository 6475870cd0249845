"""Where a file's bytes live when not in the database: a folder on disk, or an S3-compatible
bucket (`ATRIUM_FILE_STORAGE`). Both are keyed by the file's id.

Writes are whole or nothing: the disk store writes a temporary file and renames it into place,
S3 makes an object visible only once its upload (multipart above 5 MiB) completes. A file's row
is inserted only after its bytes are stored, so no row points at missing bytes; bytes whose
row never committed are deleted by the upload that wrote them, and what a crash leaves (bytes
without a row, a temporary file) is found by `listing` and swept (`files.orphans`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

import platformdirs

from atrium.db.files import PRIVATE_FILE, PRIVATE_FOLDER, sqlite_file
from atrium.settings import Settings

if TYPE_CHECKING:
    from obstore.store import S3Config

CHUNK_BYTES = 65_536
# The disk store's files being written: renamed to their key once whole.
TEMPORARY_PREFIX = ".upload-"
# Entries of a listing read at a time (a folder or bucket of millions is never listed whole).
LISTING_CHUNK = 1_000


@dataclass(frozen=True, slots=True)
class Stored:
    """A key of the store and when its bytes were last written."""

    key: str
    modified: datetime


class BlobStore(Protocol):
    """Bytes by key, outside the database."""

    kind: str

    async def put(self, key: str, source: IO[bytes]) -> None: ...

    def chunks(self, key: str) -> AsyncIterator[bytes]: ...

    def chunks_from(self, key: str, start: int, chunk_bytes: int) -> AsyncIterator[bytes]:
        """The bytes from `start` on (`start` within the stored bytes), `chunk_bytes` at a
        time; a missing key raises `FileNotFoundError`."""
        ...

    async def read(self, key: str) -> bytes: ...

    async def delete(self, key: str) -> None: ...

    def listing(self) -> AsyncIterator[Stored]: ...


class DiskStore:
    """Files in one folder (0700), each 0600, named by key."""

    kind = "disk"

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _ready(self) -> Path:
        if not self.folder.exists():
            self.folder.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                self.folder.mkdir(mode=PRIVATE_FOLDER)
        return self.folder

    def _path(self, key: str) -> Path:
        return self.folder / key

    def _put(self, key: str, source: IO[bytes]) -> None:
        folder = self._ready()
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=TEMPORARY_PREFIX)
        try:
            os.fchmod(handle, PRIVATE_FILE)
            with os.fdopen(handle, "wb") as target:
                source.seek(0)
                shutil.copyfileobj(source, target, CHUNK_BYTES)
                target.flush()
                os.fsync(target.fileno())
            os.replace(temporary, self._path(key))
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise

    async def put(self, key: str, source: IO[bytes]) -> None:
        await asyncio.to_thread(self._put, key, source)

    async def chunks(self, key: str) -> AsyncIterator[bytes]:
        with await asyncio.to_thread(self._path(key).open, "rb") as source:
            while chunk := await asyncio.to_thread(source.read, CHUNK_BYTES):
                yield chunk

    async def chunks_from(self, key: str, start: int, chunk_bytes: int) -> AsyncIterator[bytes]:
        with await asyncio.to_thread(self._path(key).open, "rb") as source:
            await asyncio.to_thread(source.seek, start)
            while chunk := await asyncio.to_thread(source.read, chunk_bytes):
                yield chunk

    async def read(self, key: str) -> bytes:
        return await asyncio.to_thread(self._path(key).read_bytes)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._path(key).unlink, missing_ok=True)

    async def listing(self) -> AsyncIterator[Stored]:
        """Every regular file of the folder (temporaries included), a chunk read at a time."""
        if not await asyncio.to_thread(self.folder.is_dir):
            return
        entries = await asyncio.to_thread(os.scandir, self.folder)
        try:
            while (chunk := await asyncio.to_thread(_stat_chunk, entries)) is not None:
                for stored in chunk:
                    yield stored
        finally:
            entries.close()


class S3Store:
    """Objects in an S3-compatible bucket, through `obstore` (imported on first use)."""

    kind = "s3"

    def __init__(self, settings: Settings) -> None:
        from obstore.store import S3Store as ObjectStore

        url = settings.file_s3_url or ""
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        endpoint = settings.file_s3_endpoint
        secret = settings.file_s3_secret_access_key
        config: S3Config = {"region": settings.file_s3_region}
        if endpoint:
            config["endpoint"] = endpoint
        if settings.file_s3_access_key_id:
            config["access_key_id"] = settings.file_s3_access_key_id
        if secret is not None:
            config["secret_access_key"] = secret.get_secret_value()
        self._store = ObjectStore(
            bucket,
            prefix=prefix.strip("/") or None,
            config=config,
            client_options={"allow_http": bool(endpoint and endpoint.startswith("http://"))},
        )

    async def put(self, key: str, source: IO[bytes]) -> None:
        import obstore

        source.seek(0)
        await obstore.put_async(self._store, key, source)

    async def chunks(self, key: str) -> AsyncIterator[bytes]:
        import obstore

        result = await obstore.get_async(self._store, key)
        async for buffer in result.stream(min_chunk_size=CHUNK_BYTES):
            yield bytes(buffer)

    async def chunks_from(self, key: str, start: int, chunk_bytes: int) -> AsyncIterator[bytes]:
        """One ranged GET (`Range: bytes=start-`), streamed."""
        import obstore
        from obstore.exceptions import NotFoundError

        try:
            result = await obstore.get_async(self._store, key, options={"range": {"offset": start}})
        except NotFoundError as exc:
            raise FileNotFoundError(key) from exc
        async for buffer in result.stream(min_chunk_size=chunk_bytes):
            yield bytes(buffer)

    async def read(self, key: str) -> bytes:
        import obstore

        result = await obstore.get_async(self._store, key)
        return bytes(await result.bytes_async())

    async def delete(self, key: str) -> None:
        import obstore

        await obstore.delete_async(self._store, key)

    async def listing(self) -> AsyncIterator[Stored]:
        """Every object under the prefix (keys relative to it), a page at a time."""
        import obstore

        async for page in obstore.list(self._store, chunk_size=LISTING_CHUNK):
            for meta in page:
                yield Stored(str(meta["path"]), meta["last_modified"])


def _stat_chunk(entries: Iterator[os.DirEntry[str]]) -> list[Stored] | None:
    """The files among the next entries; None once there are no more."""
    chunk = list(itertools.islice(entries, LISTING_CHUNK))
    if not chunk:
        return None
    found: list[Stored] = []
    for entry in chunk:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            modified = entry.stat(follow_symlinks=False).st_mtime
        except FileNotFoundError:  # deleted since it was listed
            continue
        found.append(Stored(entry.name, datetime.fromtimestamp(modified, UTC)))
    return found


def default_folder(settings: Settings) -> Path:
    """`files` beside the SQLite database, else in the user's data directory."""
    database = sqlite_file(settings.database_url)
    if database is not None:
        return database.parent / "files"
    return platformdirs.user_data_path("atrium", appauthor=False) / "files"


_stores: dict[tuple[str, str], BlobStore] = {}


def store_of(settings: Settings) -> BlobStore | None:
    """The store of the deployment's files; None when they live in the database."""
    if settings.file_storage == "database":
        return None
    if settings.file_storage == "disk":
        folder = settings.file_dir or default_folder(settings)
        key = ("disk", str(folder))
        if key not in _stores:
            _stores[key] = DiskStore(folder)
        return _stores[key]
    key = ("s3", f"{settings.file_s3_url}|{settings.file_s3_endpoint}")
    if key not in _stores:
        _stores[key] = S3Store(settings)
    return _stores[key]
