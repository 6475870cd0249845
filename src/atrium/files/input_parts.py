"""A run's `input`: parts given beside its `prompt`, checked when the run is created and
stored as references (docs/guide/files.md#runs-with-files).

The model is given the prompt, then the parts in their order, as one user message. A part is
text, a file (an upload's `file_id` or an earlier run's `artifact_id`), or an image (either of
those, or a `url`). What the run stores is the reference with what the file was (name, type,
size), never its bytes: the worker reads them when it executes the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated, Any, Literal, NotRequired, TypedDict, final

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select

from atrium.db.engine import Database
from atrium.db.models import Artifact
from atrium.files import repository
from atrium.files.errors import InputPartInvalid
from atrium.files.image_urls import refuse_private_host
from atrium.kit.ids import ID_PATTERN, looks_like_id
from atrium.kit.wire_schemas import NOT_BLANK_WITHOUT_NUL, PUBLIC_URL
from atrium.outbound.public_targets import SETTING, TargetRefused, check_url
from atrium.outbound.resolver import Resolver
from atrium.settings import Settings

MAX_PARTS = 16


def _exactly_one(*names: str) -> Callable[[dict[str, Any]], None]:
    """The part's JSON Schema says what the server checks: exactly one of `names`, a string
    (an id like those `new_id` makes, or a public URL), never null."""

    def amend(schema: dict[str, Any]) -> None:
        properties = schema["properties"]
        for name in names:
            shown = {"type": "string", "description": properties[name].get("description", "")}
            properties[name] = shown | (PUBLIC_URL if name == "url" else {"pattern": ID_PATTERN})
        schema["oneOf"] = [{"required": [name]} for name in names]

    return amend


class TextInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: Literal["text"]
    text: str = Field(
        description="Text, as a prompt's; at most ATRIUM_RUN_MAX_PROMPT_CHARS.",
        json_schema_extra={"pattern": NOT_BLANK_WITHOUT_NUL},
    )


class FileInput(BaseModel):
    """A file: one of `file_id` (an upload) or `artifact_id` (an earlier run's artifact)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra=_exactly_one("file_id", "artifact_id")
    )

    type: Literal["file"]
    file_id: str | None = Field(None, max_length=40, description="An upload of the account.")
    artifact_id: str | None = Field(
        None, max_length=40, description="An artifact of one of the account's runs."
    )


class ImageInput(BaseModel):
    """An image: one of `file_id`, `artifact_id` or `url` (a public http(s) address)."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra=_exactly_one("file_id", "artifact_id", "url")
    )

    type: Literal["image"]
    file_id: str | None = Field(None, max_length=40, description="An image upload.")
    artifact_id: str | None = Field(None, max_length=40, description="An image artifact.")
    url: str | None = Field(
        None,
        max_length=2048,
        description="A public http(s) URL; atrium fetches it when the run executes (an image "
        "type on ATRIUM_FILE_ALLOWED_TYPES, at most ATRIUM_FILE_MAX_BYTES).",
    )


InputPart = Annotated[TextInput | FileInput | ImageInput, Field(discriminator="type")]
RunInput = Annotated[list[InputPart], Field(max_length=MAX_PARTS)]


@final  # so that `"url" in part` tells the parts apart
class StoredText(TypedDict):
    type: Literal["text"]
    text: str


@final
class StoredImageUrl(TypedDict):
    type: Literal["image"]
    url: str


@final
class StoredReference(TypedDict):
    """A file or image by an upload's `file_id` or an artifact's `artifact_id` (with its
    `run_id`), and what it was when the run was created."""

    type: Literal["file", "image"]
    file_id: NotRequired[str]
    artifact_id: NotRequired[str]
    run_id: NotRequired[str]
    filename: str
    content_type: str
    size_bytes: int


# A part as `runs.input` stores it (JSON, in this key order: the API shows it as stored).
StoredPart = StoredText | StoredImageUrl | StoredReference


class _Described(TypedDict):
    """What a named upload or artifact is (an artifact's `run_id` beside)."""

    run_id: NotRequired[str]
    filename: str
    content_type: str
    size_bytes: int


def _source(part: FileInput | ImageInput, index: int) -> tuple[str, str]:
    """(`file_id` | `artifact_id` | `url`, its value): exactly one is given."""
    given = [
        (name, value)
        for name, value in (
            ("file_id", part.file_id),
            ("artifact_id", part.artifact_id),
            ("url", getattr(part, "url", None)),
        )
        if value is not None
    ]
    names = (
        "file_id, artifact_id or url" if isinstance(part, ImageInput) else "file_id or artifact_id"
    )
    if len(given) != 1:
        raise InputPartInvalid(f"input.{index}", f"input.{index} needs exactly one of {names}")
    return given[0]


async def checked_input(
    db: Database, settings: Settings, *, account_id: int, parts: list[Any]
) -> list[StoredPart]:
    """The parts as the run stores them; a 400 naming the first bad part (nothing stored)."""
    stored: list[StoredPart | None] = []
    wanted: list[tuple[int, FileInput | ImageInput, str, str]] = []
    urls: list[tuple[int, str]] = []
    for index, part in enumerate(parts):
        if isinstance(part, TextInput):
            stored.append(_text(settings, part.text, index))
            continue
        name, value = _source(part, index)
        if name == "url":
            stored.append(StoredImageUrl(type="image", url=_url(settings, value, index)))
            urls.append((index, value))
            continue
        if not looks_like_id(value):
            raise InputPartInvalid(
                f"input.{index}.{name}", f"no {name[:-3]} with id {value[:40]!r}"
            )
        wanted.append((index, part, name, value))
        stored.append(None)  # known once the account's files and artifacts are read
    await _public_hosts(settings, urls)
    found = await _found(db, account_id=account_id, wanted=wanted)
    for index, part, name, value in wanted:
        described = found.get((name, value))
        if described is None:
            kind = "file" if name == "file_id" else "artifact"
            raise InputPartInvalid(
                f"input.{index}.{name}", f"no {kind} with id {value!r} in this account"
            )
        if part.type == "image" and not described["content_type"].startswith("image/"):
            raise InputPartInvalid(
                f"input.{index}.{name}",
                f"{value} is {described['content_type']}, not an image; give it as a file part",
            )
        stored[index] = _reference(part.type, name, value, described)
    return [part for part in stored if part is not None]


def _reference(
    kind: Literal["file", "image"], name: str, value: str, described: _Described
) -> StoredReference:
    if name == "file_id":
        return StoredReference(
            type=kind,
            file_id=value,
            filename=described["filename"],
            content_type=described["content_type"],
            size_bytes=described["size_bytes"],
        )
    return StoredReference(
        type=kind,
        artifact_id=value,
        run_id=described["run_id"],
        filename=described["filename"],
        content_type=described["content_type"],
        size_bytes=described["size_bytes"],
    )


def _text(settings: Settings, text: str, index: int) -> StoredText:
    if not text.strip() or "\x00" in text:
        raise InputPartInvalid(f"input.{index}.text", "text must not be blank nor contain NUL")
    if len(text) > settings.run_max_prompt_chars:
        raise InputPartInvalid(
            f"input.{index}.text", f"text is longer than {settings.run_max_prompt_chars} characters"
        )
    return StoredText(type="text", text=text)


def _url(settings: Settings, url: str, index: int) -> str:
    """An image URL obeys the rule of every URL a user gives (a public address)."""
    try:
        return check_url(url, allow_private=settings.allow_private_targets)
    except TargetRefused as exc:
        message = f"input.{index}.url {exc}"
        if SETTING not in message and "not a public address" in message:
            message += f"; {SETTING}=true allows it"
        raise InputPartInvalid(f"input.{index}.url", message) from None


async def _public_hosts(settings: Settings, urls: list[tuple[int, str]]) -> None:
    """The image URLs' host names looked up (all at once): one that resolves to an address
    that is not public is a 400 now. The worker's fetch checks again, on the address it
    connects to (`files.image_urls`)."""
    if not urls or settings.allow_private_targets:
        return
    resolver = Resolver.from_settings(settings)
    outcomes = await asyncio.gather(
        *(refuse_private_host(settings, resolver, url) for _, url in urls), return_exceptions=True
    )
    for (index, url), outcome in zip(urls, outcomes, strict=True):
        if isinstance(outcome, TargetRefused):
            raise InputPartInvalid(f"input.{index}.url", f"input.{index}.url {url}: {outcome}")
        if isinstance(outcome, BaseException):
            raise outcome


async def _found(
    db: Database, *, account_id: int, wanted: list[tuple[int, FileInput | ImageInput, str, str]]
) -> dict[tuple[str, str], _Described]:
    """What each named file or artifact of the account is: name, type, size."""
    file_ids = [value for _, _, name, value in wanted if name == "file_id"]
    artifact_ids = [value for _, _, name, value in wanted if name == "artifact_id"]
    found: dict[tuple[str, str], _Described] = {}
    if not wanted:
        return found
    async with db.session(write=False) as session:
        for row in (
            await repository.of_ids(session, account_id=account_id, file_ids=file_ids)
        ).values():
            found["file_id", row.id] = _Described(
                filename=row.filename, content_type=row.content_type, size_bytes=row.size_bytes
            )
        if artifact_ids:
            query = select(
                Artifact.id, Artifact.run_id, Artifact.name, Artifact.mime_type, Artifact.size_bytes
            ).where(Artifact.id.in_(set(artifact_ids)), Artifact.account_id == account_id)
            for artifact in (await session.execute(query)).all():
                found["artifact_id", artifact.id] = _Described(
                    run_id=artifact.run_id,
                    filename=artifact.name,
                    content_type=artifact.mime_type,
                    size_bytes=artifact.size_bytes,
                )
    return found
