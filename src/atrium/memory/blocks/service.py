"""The rules of memory blocks: unique labels, a size limit never exceeded, and a new version
with its writer on every change (by the API, or by a run's `block_append`/`block_replace`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import MemoryBlock, MemoryBlockVersion
from atrium.errors import InvalidParameter
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from atrium.memory.blocks import repository
from atrium.memory.blocks.errors import (
    BlockLabelTaken,
    BlockNotFound,
    BlockTooLong,
    BlockVersionChanged,
)
from atrium.memory.blocks.schemas import BlockCreate, BlockUpdate
from atrium.memory.service import Writer

MAX_LIST_LIMIT: Final = 200


def _record(session: AsyncSession, block: MemoryBlock, action: str, writer: Writer) -> None:
    session.add(
        MemoryBlockVersion(
            id=new_id("blkv"),
            block_id=block.id,
            account_id=block.account_id,
            label=block.label,
            version=block.version,
            action=action,
            value=block.value,
            char_limit=block.char_limit,
            api_key_id=writer.api_key_id,
            run_id=writer.run_id,
            tool_call_id=writer.tool_call_id,
        )
    )


def _check_limit(limit: int, max_chars: int) -> None:
    if limit > max_chars:
        raise InvalidParameter(
            "limit", f"limit is at most {max_chars:,} characters (ATRIUM_MEMORY_BLOCK_MAX_CHARS)"
        )


async def create_block(
    session: AsyncSession,
    *,
    account_id: int,
    data: BlockCreate,
    writer: Writer,
    max_chars: int,
    max_blocks: int,
) -> MemoryBlock:
    """A new block at version 1; 409 when the label is taken."""
    _check_limit(data.limit, max_chars)
    if len(data.value) > data.limit:
        raise BlockTooLong("value", data.label, len(data.value), data.limit)
    if await repository.count(session, account_id=account_id) >= max_blocks:
        raise InvalidParameter(
            "label", f"an account has at most {max_blocks} memory blocks; delete one first"
        )
    now = utcnow()
    block = MemoryBlock(
        id=new_id("blk"),
        account_id=account_id,
        label=data.label,
        value=data.value,
        char_limit=data.limit,
        version=1,
        created_at=now,
        updated_at=now,
    )
    try:
        # A savepoint: a concurrent create of the same label loses here, with a 409.
        async with session.begin_nested():
            session.add(block)
    except IntegrityError:
        raise BlockLabelTaken(data.label) from None
    _record(session, block, "created", writer)
    await session.flush()
    return block


async def get_block(session: AsyncSession, *, account_id: int, label: str) -> MemoryBlock:
    block = await repository.by_label(session, account_id=account_id, label=label)
    if block is None:
        raise BlockNotFound(label)
    return block


async def _for_update(session: AsyncSession, *, account_id: int, label: str) -> MemoryBlock:
    block = await repository.by_label(session, account_id=account_id, label=label, for_update=True)
    if block is None:
        raise BlockNotFound(label)
    return block


def _change(
    session: AsyncSession,
    block: MemoryBlock,
    *,
    value: str,
    limit: int,
    action: str,
    writer: Writer,
) -> None:
    block.value = value
    block.char_limit = limit
    block.version += 1
    block.updated_at = utcnow()
    _record(session, block, action, writer)


async def update_block(
    session: AsyncSession,
    *,
    account_id: int,
    label: str,
    data: BlockUpdate,
    writer: Writer,
    max_chars: int,
) -> MemoryBlock:
    """Replace the text, the limit or both: the next version."""
    if data.value is None and data.limit is None:
        raise InvalidParameter("value", "give value, limit or both")
    if data.limit is not None:
        _check_limit(data.limit, max_chars)
    block = await _for_update(session, account_id=account_id, label=label)
    if data.if_version is not None and data.if_version != block.version:
        raise BlockVersionChanged(label, block.version)
    value = block.value if data.value is None else data.value
    limit = block.char_limit if data.limit is None else data.limit
    if len(value) > limit:
        raise BlockTooLong("value" if data.value is not None else "limit", label, len(value), limit)
    _change(session, block, value=value, limit=limit, action="updated", writer=writer)
    await session.flush()
    return block


async def append_text(
    session: AsyncSession, *, account_id: int, label: str, text: str, writer: Writer
) -> MemoryBlock:
    """Add `text` at the end of the block, on a new line when the block is not empty and does
    not end with one (`block_append`). Over the limit: `BlockTooLong`, nothing written."""
    if not text:
        raise InvalidParameter("text", "text is empty")
    block = await _for_update(session, account_id=account_id, label=label)
    separator = "\n" if block.value and not block.value.endswith("\n") else ""
    value = f"{block.value}{separator}{text}"
    if len(value) > block.char_limit:
        raise BlockTooLong("text", label, len(value), block.char_limit)
    _change(session, block, value=value, limit=block.char_limit, action="appended", writer=writer)
    await session.flush()
    return block


async def replace_text(
    session: AsyncSession,
    *,
    account_id: int,
    label: str,
    old_text: str,
    new_text: str,
    writer: Writer,
) -> MemoryBlock:
    """Replace `old_text`, which must occur exactly once in the block, by `new_text` (empty:
    remove it) (`block_replace`). Not found, found twice or over the limit: an
    `InvalidParameter` naming the argument, nothing written."""
    if not old_text:
        raise InvalidParameter("old_text", "old_text is empty")
    block = await _for_update(session, account_id=account_id, label=label)
    occurrences = block.value.count(old_text)
    if occurrences != 1:
        found = "is not in" if occurrences == 0 else f"occurs {occurrences} times in"
        raise InvalidParameter(
            "old_text",
            f"old_text {found} memory block {label!r}; give text that occurs exactly once",
            occurrences=occurrences,
        )
    value = block.value.replace(old_text, new_text, 1)
    if len(value) > block.char_limit:
        raise BlockTooLong("new_text", label, len(value), block.char_limit)
    _change(session, block, value=value, limit=block.char_limit, action="replaced", writer=writer)
    await session.flush()
    return block


async def delete_block(
    session: AsyncSession, *, account_id: int, label: str, writer: Writer
) -> MemoryBlock:
    """Delete the block; its history keeps a `deleted` version. Agents naming the label
    render nothing for it from their next run on."""
    block = await _for_update(session, account_id=account_id, label=label)
    block.version += 1
    _record(session, block, "deleted", writer)
    await session.delete(block)
    await session.flush()
    return block


async def list_blocks(
    session: AsyncSession, *, account_id: int, limit: int, cursor: str | None
) -> tuple[Sequence[MemoryBlock], str | None]:
    rows = await repository.list_page(
        session,
        account_id=account_id,
        limit=limit,
        position=decode_cursor(cursor) if cursor else None,
    )
    return split_page(rows, limit)


async def history(
    session: AsyncSession, *, account_id: int, label: str, limit: int, cursor: str | None
) -> tuple[Sequence[MemoryBlockVersion], str | None]:
    """The versions of every block that had the label, newest first; 404 when none ever."""
    rows = await repository.versions_page(
        session,
        account_id=account_id,
        label=label,
        limit=limit,
        position=decode_cursor(cursor) if cursor else None,
    )
    if not rows and cursor is None:
        raise BlockNotFound(label)
    return split_page(rows, limit)


async def blocks_of(
    session: AsyncSession, *, account_id: int, labels: Sequence[str]
) -> list[MemoryBlock]:
    """The account's blocks with these labels, in their order; a label without a block
    (never created, or deleted) is left out."""
    found = {
        block.label: block
        for block in await repository.by_labels(session, account_id=account_id, labels=labels)
    }
    return [found[label] for label in labels if label in found]
