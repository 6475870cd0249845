"""Wire shapes of the spaces API, phpShort's (docs/design.md#domains)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Depends
from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from atrium.db.models import Space
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import trimmed_text_schema
from atrium.phpshort.resources import Deleted, Envelope, Page, path_id
from atrium.spaces.errors import SpaceNotFound
from atrium.spaces.service import MAX_NAME_LENGTH


class SpaceOut(BaseModel):
    """A space record."""

    id: int
    name: str
    color: int = Field(description="Color code, 1 to 6.")
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, space: Space) -> SpaceOut:
        return cls(
            id=space.id,
            name=space.name,
            color=space.color,
            created_at=isoformat(space.created_at),
            updated_at=isoformat(space.updated_at),
        )


# The `{id}` of a path: 400 when not an integer, 404 when no space can have it.
SpaceId = Annotated[int, Depends(path_id(SpaceNotFound))]


class SpaceEnvelope(Envelope[SpaceOut]):
    """One space: `{"data": {...}, "status": 200}`."""

    @classmethod
    def of(cls, space: Space) -> SpaceEnvelope:
        return cls(data=SpaceOut.of(space))


class SpacePage(Page[SpaceOut]):
    """A Laravel paginator page of spaces."""


class SpaceDeleted(Deleted):
    object: Literal["space"] = "space"


# Trimmed, then 1 to 32 characters without control characters.
_NAME: dict[str, Any] = {
    "json_schema_extra": trimmed_text_schema(MAX_NAME_LENGTH, required=True),
}


class SpaceForm(BaseModel):
    """Store: `name` required, `color` 1-6 (default 1)."""

    name: str = Field(description="1 to 32 characters, unique in the account.", **_NAME)
    color: int | None = Field(None, ge=1, le=6, description="1 to 6; default 1.")


class SpaceUpdateForm(BaseModel):
    """Update: both optional; absent fields are kept."""

    # Absent keeps the name; null is refused (`name is required`), so it is not shown.
    name: str | SkipJsonSchema[None] = Field(
        None, description="1 to 32 characters, unique in the account.", **_NAME
    )
    color: int | None = Field(None, ge=1, le=6, description="1 to 6.")
