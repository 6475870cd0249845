"""Request and response bodies of `/v1/memory`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from atrium.db.models import MemoryItem, MemoryItemHistory
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import WITHOUT_NUL, integral
from atrium.memory.namespaces import MAX_SEGMENTS, SEGMENT_PATTERN

MAX_TTL_SECONDS = 10 * 365 * 24 * 3600
Namespace = list[str]


def _namespace_field(description: str) -> Any:
    return Field(
        description=description,
        min_length=1,
        max_length=MAX_SEGMENTS,
        json_schema_extra={"items": {"type": "string", "pattern": SEGMENT_PATTERN}},
    )


# A namespace's segments as the OpenAPI document states them (each checked again by
# `namespaces.check`, which names the parameter).
Segments = Annotated[
    list[str], Field(json_schema_extra={"items": {"type": "string", "pattern": SEGMENT_PATTERN}})
]


class MemoryPut(BaseModel):
    """An item to create or replace under (namespace, key)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    namespace: list[str] = _namespace_field(
        '1-8 segments, each 1-64 of A-Z a-z 0-9 _ . : @ - (e.g. ["users", "alice"]).'
    )
    key: str = Field(min_length=1, max_length=200, pattern=WITHOUT_NUL)
    value: Any = Field(description="Any JSON value, at most 64 KiB once serialized.")
    text: str | None = Field(
        None,
        max_length=20_000,
        pattern=WITHOUT_NUL,
        description="What text search matches; default: the strings inside `value`.",
    )
    ttl_seconds: (
        Annotated[int, Field(ge=1, le=MAX_TTL_SECONDS), BeforeValidator(integral)] | None
    ) = Field(None, description="Forgotten this many seconds after the write.")


class MemorySearch(BaseModel):
    """Words to find (all of them, any order), optionally under a namespace prefix."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=1000, pattern=WITHOUT_NUL)
    mode: Literal["text", "semantic"] = Field(
        "text",
        description="`text`: items holding every word; `semantic`: items nearest in meaning "
        "(needs ATRIUM_EMBEDDINGS_MODEL).",
    )
    namespace_prefix: Segments | None = Field(None, max_length=MAX_SEGMENTS)
    limit: Annotated[int, Field(ge=1, le=100), BeforeValidator(integral)] = 10
    filter: dict[str, Any] | None = Field(
        None,
        description="Only items whose value is an object holding each of these top-level "
        "keys with an equal value.",
    )


class MemoryItemOut(BaseModel):
    item_id: str
    namespace: list[str]
    key: str
    value: Any
    text: str | None
    expires_at: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, item: MemoryItem) -> MemoryItemOut:
        return cls(
            item_id=item.id,
            namespace=list(item.namespace),
            key=item.key,
            value=item.value,
            text=item.text,
            expires_at=isoformat(item.expires_at) if item.expires_at else None,
            created_at=isoformat(item.created_at),
            updated_at=isoformat(item.updated_at),
        )


class MemoryItemList(BaseModel):
    """A page of items, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[MemoryItemOut]
    has_more: bool
    next_cursor: str | None

    @classmethod
    def page(cls, items: Sequence[MemoryItem], next_cursor: str | None) -> MemoryItemList:
        return cls(
            data=[MemoryItemOut.of(item) for item in items],
            has_more=next_cursor is not None,
            next_cursor=next_cursor,
        )


class MemorySearchResult(BaseModel):
    data: list[MemoryItemOut]


class MemoryItemDeleted(BaseModel):
    item_id: str
    deleted: bool = True


class MemoryHistoryEntry(BaseModel):
    """One write or delete: by an API key (`api_key_id`) or a run's tool call."""

    action: str
    namespace: list[str]
    key: str
    value: Any
    api_key_id: int | None
    run_id: str | None
    tool_call_id: str | None
    created_at: str

    @classmethod
    def of(cls, entry: MemoryItemHistory) -> MemoryHistoryEntry:
        return cls(
            action=entry.action,
            namespace=list(entry.namespace),
            key=entry.key,
            value=entry.value,
            api_key_id=entry.api_key_id,
            run_id=entry.run_id,
            tool_call_id=entry.tool_call_id,
            created_at=isoformat(entry.created_at),
        )


class MemoryHistory(BaseModel):
    """Every write and delete of an item, newest first."""

    item_id: str
    data: list[MemoryHistoryEntry]
