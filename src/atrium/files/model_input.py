"""A run's input parts as its model is given them (the worker's side of `input_parts`).

Each file is announced by a line naming it (`File file_… "report.pdf" (application/pdf,
48213 bytes):`), so every model, and the `read_file` tool, can refer to it by id. Then:
- an image goes as an image (pydantic-ai `BinaryContent`; a provider that takes images sends
  it in its own format, OpenAI's `image_url` with a data URI);
- a PDF as a document (OpenAI's `file` part);
- a text file inline, all text files of the run together within
  ATRIUM_FILE_INLINE_MAX_TOKENS (about 4 characters a token); the rest is named, with the
  offset `read_file` continues from;
- any other type by its line alone; `read_file` says what it is.
An image URL is fetched by atrium when the run executes (`files.image_urls`: the outbound
rule on every connection) and goes as an image, announced by a line `Image <url> (type,
size):`; one that cannot be fetched fails the run, `INPUT_UNAVAILABLE`.

A run's stored messages keep no bytes: `without_bytes` replaces each image or document of
the run's prompt with a line naming it, so the thread's later runs see that it was given, and
a run that waited for its caller is given the bytes again from its input when it resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import BinaryContent, UserContent
from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import defer

from atrium.db.engine import Database
from atrium.db.models import Artifact, Run, StoredFile
from atrium.files import repository
from atrium.files.image_urls import fetch_images
from atrium.files.input_parts import StoredPart
from atrium.files.reading import ByteSource, DatabaseSource, FileContent, FileGone, StoreSource
from atrium.files.service import DATABASE
from atrium.files.sniffing import is_text_type
from atrium.files.storage import store_of
from atrium.settings import Settings

CHARS_PER_TOKEN = 4
_MODEL_TYPES = ("image/", "application/pdf")


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file the run was given, as `read_file` reads it; `content` None: deleted before the
    run."""

    ref: str
    filename: str
    content_type: str
    size_bytes: int
    content: FileContent | None

    def header(self) -> str:
        return f'File {self.ref} "{self.filename}" ({self.content_type}, {self.size_bytes} bytes):'


@dataclass(slots=True)
class ModelInput:
    """What the model is given after the prompt, and the files `read_file` reads."""

    content: list[UserContent] = field(default_factory=list)
    files: dict[str, InputFile] = field(default_factory=dict)


async def _files(
    db: Database, settings: Settings, *, account_id: int, parts: list[StoredPart]
) -> dict[str, InputFile]:
    """The files and artifacts of `parts`, their bytes left where they are stored."""
    file_ids = [part["file_id"] for part in parts if "file_id" in part]
    artifact_ids = [part["artifact_id"] for part in parts if "artifact_id" in part]
    found: dict[str, InputFile] = {}
    async with db.session(write=False) as session:
        rows = await repository.of_ids(session, account_id=account_id, file_ids=file_ids)
        if artifact_ids:
            query = (
                select(Artifact)
                .where(Artifact.id.in_(set(artifact_ids)), Artifact.account_id == account_id)
                .options(defer(Artifact.content))
            )
            for artifact in (await session.execute(query)).scalars():
                source = DatabaseSource(db, Artifact.content, Artifact.id, artifact.id)
                found[artifact.id] = InputFile(
                    artifact.id,
                    artifact.name,
                    artifact.mime_type,
                    artifact.size_bytes,
                    FileContent(source),
                )
    for row in rows.values():
        content = FileContent(_source(db, settings, row))
        found[row.id] = InputFile(row.id, row.filename, row.content_type, row.size_bytes, content)
    return found


def _source(db: Database, settings: Settings, row: StoredFile) -> ByteSource:
    if row.storage == DATABASE:
        return DatabaseSource(db, StoredFile.content, StoredFile.id, row.id)
    store = store_of(settings)
    if store is None or store.kind != row.storage:
        raise RuntimeError(f"file {row.id} is in {row.storage} storage, which is not configured")
    return StoreSource(store, row.id, row.size_bytes)


# A point read that every run's execution makes (most runs have no input): built once, so
# each read skips building the statement and its cache key.
_RUN_INPUT = select(Run.input).where(Run.id == bindparam("b_run_id"))


async def model_input(
    db: Database, settings: Settings, *, account_id: int, run_id: str
) -> ModelInput:
    """The run's input parts, with their bytes read now: images and PDFs whole, text within
    the inline budget (a file deleted since the run was created is named as deleted)."""

    def read(conn: Connection) -> list[StoredPart] | None:
        # What `input_parts.checked_input` stored, as JSON.
        found: list[StoredPart] | None = conn.scalar(_RUN_INPUT, {"b_run_id": run_id})
        return found

    parts = await db.point_read(read)
    given = ModelInput()
    if not parts:
        return given
    stored = await _files(db, settings, account_id=account_id, parts=parts)
    images = await fetch_images(settings, [part["url"] for part in parts if "url" in part])
    budget = settings.file_inline_max_tokens * CHARS_PER_TOKEN
    for part in parts:
        if part["type"] == "text":
            given.content.append(part["text"])
            continue
        if "url" in part:
            image = images[part["url"]]
            given.content.append(image.header())
            given.content.append(
                BinaryContent(image.data, media_type=image.content_type, identifier=image.url)
            )
            continue
        ref = part.get("file_id") or part["artifact_id"]
        file = stored.get(ref) or InputFile(
            ref, part["filename"], part["content_type"], part["size_bytes"], None
        )
        given.files[ref] = file
        budget -= await _append(given.content, file, budget)
    return given


async def _append(content: list[UserContent], file: InputFile, budget: int) -> int:
    """Give the model `file`; the characters of the inline budget it used."""
    deleted = f"{file.header()} deleted before the run started."
    if file.content is None:
        content.append(deleted)
        return 0
    if file.content_type.startswith(_MODEL_TYPES):
        try:
            data = await file.content.whole()
        except FileGone:
            content.append(deleted)
            return 0
        content.append(file.header())
        content.append(BinaryContent(data, media_type=file.content_type, identifier=file.ref))
        return 0
    if not is_text_type(file.content_type):
        content.append(f"{file.header()} not text; read_file({file.ref!r}) describes it.")
        return 0
    try:
        shown, characters = await file.content.text(0, budget)
    except FileGone:
        content.append(deleted)
        return 0
    content.append(file.header())
    rest = characters - len(shown)
    if rest:
        shown += (
            f"\n[{rest} more characters: read_file({file.ref!r}, offset={len(shown)}) reads on]"
        )
    content.append(shown)
    return len(shown)


def without_bytes(messages: list[Any] | None) -> list[Any] | None:
    """pydantic-ai JSON messages with each image or document of a prompt replaced by a line
    naming it (a file by its id, which `read_file` takes; an image URL by itself)."""
    if not messages:
        return messages
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            content = part.get("content")
            if part.get("part_kind") != "user-prompt" or not isinstance(content, list):
                continue
            part["content"] = [
                _named(item) if isinstance(item, dict) and item.get("kind") == "binary" else item
                for item in content
            ]
    return messages


def _named(item: dict[str, Any]) -> str:
    identifier, media_type = item.get("identifier"), item.get("media_type")
    if isinstance(identifier, str) and identifier.startswith(("http://", "https://")):
        return f"[{identifier}: given as {media_type}]"
    return f"[{identifier}: given as {media_type}; read_file reads it]"
