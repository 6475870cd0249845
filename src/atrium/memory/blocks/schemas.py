"""Request and response bodies of `/v1/memory/blocks`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from atrium.db.models import MemoryBlock, MemoryBlockVersion
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import WITHOUT_NUL, integral

# Also `agents.memory_config.BLOCK_LABEL_PATTERN` (agents may not import memory; a test keeps
# the two equal).
LABEL_PATTERN: Final = r"^[A-Za-z0-9_.-]{1,64}$"
DEFAULT_LIMIT: Final = 2_000
# The schema's bound; `ATRIUM_MEMORY_BLOCK_MAX_CHARS` (at most this) is the one enforced.
MAX_LIMIT: Final = 1_000_000

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT), BeforeValidator(integral)]
Text = Annotated[str, Field(max_length=MAX_LIMIT, pattern=WITHOUT_NUL)]


class BlockCreate(BaseModel):
    """A new block: its label (unique in the account), text and limit."""

    model_config = ConfigDict(extra="forbid", strict=True)

    label: str = Field(
        pattern=LABEL_PATTERN, description="1-64 of A-Z a-z 0-9 _ . - (e.g. persona)."
    )
    value: Text = Field("", description="The block's text, at most `limit` characters.")
    limit: Limit = Field(
        DEFAULT_LIMIT,
        description="Characters the block may hold (default 2,000; at most "
        "ATRIUM_MEMORY_BLOCK_MAX_CHARS).",
    )


class BlockUpdate(BaseModel):
    """New text, a new limit, or both: a new version of the block."""

    model_config = ConfigDict(extra="forbid", strict=True)

    value: Text | None = Field(None, description="Replaces the whole text.")
    limit: Limit | None = Field(None, description="At least the length of the text kept.")
    if_version: Annotated[int, Field(ge=1), BeforeValidator(integral)] | None = Field(
        None, description="Only if the block is still at this version (else 409 CONFLICT)."
    )


class BlockOut(BaseModel):
    block_id: str
    label: str
    value: str
    limit: int
    chars: int = Field(description="Characters `value` holds.")
    version: int = Field(description="1 on creation, one more on every change.")
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, block: MemoryBlock) -> BlockOut:
        return cls(
            block_id=block.id,
            label=block.label,
            value=block.value,
            limit=block.char_limit,
            chars=len(block.value),
            version=block.version,
            created_at=isoformat(block.created_at),
            updated_at=isoformat(block.updated_at),
        )


class BlockList(BaseModel):
    """A page of blocks, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[BlockOut]
    has_more: bool
    next_cursor: str | None

    @classmethod
    def page(cls, blocks: Sequence[MemoryBlock], next_cursor: str | None) -> BlockList:
        return cls(
            data=[BlockOut.of(block) for block in blocks],
            has_more=next_cursor is not None,
            next_cursor=next_cursor,
        )


class BlockDeleted(BaseModel):
    block_id: str
    label: str
    deleted: bool = True


class BlockVersionOut(BaseModel):
    """One version: the text and limit after the change, and who made it (an API key, or a
    run's tool call)."""

    block_id: str
    label: str
    version: int
    action: str = Field(description="created, updated, appended, replaced or deleted.")
    value: str
    limit: int
    api_key_id: int | None
    run_id: str | None
    tool_call_id: str | None
    created_at: str

    @classmethod
    def of(cls, entry: MemoryBlockVersion) -> BlockVersionOut:
        return cls(
            block_id=entry.block_id,
            label=entry.label,
            version=entry.version,
            action=entry.action,
            value=entry.value,
            limit=entry.char_limit,
            api_key_id=entry.api_key_id,
            run_id=entry.run_id,
            tool_call_id=entry.tool_call_id,
            created_at=isoformat(entry.created_at),
        )


class BlockHistory(BaseModel):
    """Every version of the blocks that had the label (a deleted one's too), newest first."""

    label: str
    data: list[BlockVersionOut]
    has_more: bool
    next_cursor: str | None

    @classmethod
    def page(
        cls, label: str, entries: Sequence[MemoryBlockVersion], next_cursor: str | None
    ) -> BlockHistory:
        return cls(
            label=label,
            data=[BlockVersionOut.of(entry) for entry in entries],
            has_more=next_cursor is not None,
            next_cursor=next_cursor,
        )
