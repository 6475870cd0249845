"""Response bodies of `/files` (docs/guide/files.md)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class FileOut(BaseModel):
    """An uploaded file. `content_type` is sniffed from its bytes, not taken from the client."""

    file_id: str
    filename: str
    content_type: str
    size_bytes: int
    sha256: str
    created_at: str
    content_url: str = Field(description="Downloads the file's bytes.")


class FileList(BaseModel):
    """A page of files, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[FileOut]
    has_more: bool
    next_cursor: str | None


class FileDeleted(BaseModel):
    file_id: str
    deleted: Literal[True] = True
