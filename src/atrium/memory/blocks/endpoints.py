"""`/v1/memory/blocks`: named, size-limited texts rendered into the instructions of the
agents that list them in `config.blocks`; every change is a new version with its writer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from atrium.http.deps import CurrentPrincipal, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.memory.blocks import service
from atrium.memory.blocks.errors import (
    BlockLabelTaken,
    BlockNotFound,
    BlockTooLong,
    BlockVersionChanged,
)
from atrium.memory.blocks.schemas import (
    LABEL_PATTERN,
    BlockCreate,
    BlockDeleted,
    BlockHistory,
    BlockList,
    BlockOut,
    BlockUpdate,
)
from atrium.memory.service import Writer

# Included by `memory.endpoints` (under `/v1/memory`); a body without Content-Type is read as
# JSON, as in the rest of the group.
router = APIRouter(prefix="/blocks", tags=["memory"], strict_content_type=False)
_NOT_FOUND = error_responses(BlockNotFound)
Label = Annotated[str, Path(pattern=LABEL_PATTERN, description="The block's label, e.g. persona.")]
PageLimit = Annotated[int, Query(ge=1, le=service.MAX_LIST_LIMIT, description="At most 200.")]


@router.post("", status_code=201, responses=error_responses(BlockLabelTaken, BlockTooLong))
async def create_block(
    body: BlockCreate, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> BlockOut:
    """A new block (version 1) under a label unused in the account (409 otherwise)."""
    block = await service.create_block(
        session,
        account_id=principal.account_id,
        data=body,
        writer=Writer(api_key_id=principal.key_id),
        max_chars=settings.memory_block_max_chars,
        max_blocks=settings.memory_block_max_per_account,
    )
    return BlockOut.of(block)


@router.get("")
async def list_blocks(
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: PageLimit = 50,
    cursor: CursorQuery = None,
) -> BlockList:
    """The account's blocks, newest first. Follow `next_cursor` (as `cursor`) while
    `has_more`."""
    blocks, next_cursor = await service.list_blocks(
        session, account_id=principal.account_id, limit=limit, cursor=cursor
    )
    return BlockList.page(blocks, next_cursor)


@router.get("/{label}", responses=_NOT_FOUND)
async def get_block(label: Label, session: SessionDep, principal: CurrentPrincipal) -> BlockOut:
    """The block's current text and version."""
    block = await service.get_block(session, account_id=principal.account_id, label=label)
    return BlockOut.of(block)


@router.patch(
    "/{label}", responses=error_responses(BlockNotFound, BlockTooLong, BlockVersionChanged)
)
async def update_block(
    label: Label,
    body: BlockUpdate,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> BlockOut:
    """Replace the text, the limit or both: the next version. The next run of every agent
    with the block attached sees it."""
    block = await service.update_block(
        session,
        account_id=principal.account_id,
        label=label,
        data=body,
        writer=Writer(api_key_id=principal.key_id),
        max_chars=settings.memory_block_max_chars,
    )
    return BlockOut.of(block)


@router.delete("/{label}", responses=_NOT_FOUND)
async def delete_block(
    label: Label, session: SessionDep, principal: CurrentPrincipal
) -> BlockDeleted:
    """Delete the block (its history stays readable); agents attached to it render nothing
    for it from their next run on."""
    block = await service.delete_block(
        session,
        account_id=principal.account_id,
        label=label,
        writer=Writer(api_key_id=principal.key_id),
    )
    return BlockDeleted(block_id=block.id, label=block.label)


@router.get("/{label}/history", responses=_NOT_FOUND)
async def block_history(
    label: Label,
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: PageLimit = 50,
    cursor: CursorQuery = None,
) -> BlockHistory:
    """Every version of the blocks that had the label (a deleted one's too), newest first,
    each with its API key or its run and tool call."""
    entries, next_cursor = await service.history(
        session, account_id=principal.account_id, label=label, limit=limit, cursor=cursor
    )
    return BlockHistory.page(label, entries, next_cursor)
