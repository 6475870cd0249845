"""`/v1/memory`: items kept across threads, by key, namespace prefix and text."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from atrium.http.deps import CurrentPrincipal, DatabaseDep, SessionDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.memory import namespaces, service
from atrium.memory.blocks.endpoints import router as blocks_router
from atrium.memory.embedders import Embedder, process_embedder
from atrium.memory.errors import EmbeddingsUnavailable, MemoryItemNotFound
from atrium.memory.schemas import (
    MemoryHistory,
    MemoryHistoryEntry,
    MemoryItemDeleted,
    MemoryItemList,
    MemoryItemOut,
    MemoryPut,
    MemorySearch,
    MemorySearchResult,
)
from atrium.memory.vectors import VectorIndex, vectors_of

# A body sent without Content-Type is read as JSON (what this group takes); the gateway already
# answers 415 for any other declared type.
router = APIRouter(prefix="/memory", tags=["memory"], strict_content_type=False)
router.include_router(blocks_router)
_NOT_FOUND = error_responses(MemoryItemNotFound)
_EMBEDDINGS = error_responses(EmbeddingsUnavailable)
NamespaceText = Annotated[
    str,
    Query(
        max_length=600,
        pattern=namespaces.TEXT_PATTERN,
        description="Segments joined by '/', e.g. users/alice.",
    ),
]
PrefixText = Annotated[
    str,
    Query(
        max_length=600,
        pattern=namespaces.PREFIX_TEXT_PATTERN,
        description="Segments joined by '/', e.g. users; empty: every namespace.",
    ),
]


def _embedder(request: Request) -> Embedder | None:
    """The process's embedder (ATRIUM_EMBEDDINGS_MODEL), shared with its worker's runs."""
    return process_embedder(request.app.state.settings)


EmbedderDep = Annotated[Embedder | None, Depends(_embedder)]


def _vectors(request: Request) -> VectorIndex:
    """The process's vectors of search by meaning (ATRIUM_MEMORY_VECTOR_CACHE_MB)."""
    return vectors_of(request.app.state.db, request.app.state.settings)


@router.put("/items", responses=_EMBEDDINGS)
async def put_item(
    body: MemoryPut, db: DatabaseDep, principal: CurrentPrincipal, embedder: EmbedderDep
) -> MemoryItemOut:
    """Create the item under (`namespace`, `key`), or replace its value (same `item_id`).
    Every write is kept in the item's history with the API key that made it."""
    item = await service.put_item(
        db,
        account_id=principal.account_id,
        data=body,
        writer=service.Writer(api_key_id=principal.key_id),
        embedder=embedder,
    )
    return MemoryItemOut.of(item)


@router.get("/items")
async def list_items(
    session: SessionDep,
    principal: CurrentPrincipal,
    namespace_prefix: PrefixText = "",
    limit: Annotated[int, Query(ge=1, le=service.MAX_LIST_LIMIT, description="At most 200.")] = 50,
    cursor: CursorQuery = None,
) -> MemoryItemList:
    """Live items under `namespace_prefix` (all when empty), newest first. Follow
    `next_cursor` (as `cursor`) while `has_more`."""
    items, next_cursor = await service.list_items(
        session,
        account_id=principal.account_id,
        namespace_prefix=namespace_prefix,
        limit=limit,
        cursor=cursor,
    )
    return MemoryItemList.page(items, next_cursor)


# Declared before `/items/{item_id}`, which would otherwise take "by-key" for an id.
@router.get("/items/by-key", responses=_NOT_FOUND)
async def get_by_key(
    session: SessionDep,
    principal: CurrentPrincipal,
    namespace: NamespaceText,
    key: Annotated[str, Query(min_length=1, max_length=200)],
) -> MemoryItemOut:
    """The live item under (`namespace`, `key`)."""
    item = await service.get_by_key(
        session, account_id=principal.account_id, namespace=namespace, key=key
    )
    return MemoryItemOut.of(item)


@router.get("/items/{item_id}", responses=_NOT_FOUND)
async def get_item(item_id: str, session: SessionDep, principal: CurrentPrincipal) -> MemoryItemOut:
    """One live item of the account (404 when unknown, expired or another account's)."""
    item = await service.get_item(session, account_id=principal.account_id, item_id=item_id)
    return MemoryItemOut.of(item)


@router.delete("/items/{item_id}", responses=_NOT_FOUND)
async def delete_item(
    item_id: str, session: SessionDep, principal: CurrentPrincipal
) -> MemoryItemDeleted:
    """Forget an item; its history keeps the delete and who made it."""
    deleted = await service.delete_item(
        session,
        account_id=principal.account_id,
        item_id=item_id,
        writer=service.Writer(api_key_id=principal.key_id),
    )
    return MemoryItemDeleted(item_id=deleted)


@router.get("/items/{item_id}/history", responses=_NOT_FOUND)
async def item_history(
    item_id: str, session: SessionDep, principal: CurrentPrincipal
) -> MemoryHistory:
    """Every write and delete of the item, newest first, each with its API key or its run
    and tool call (also after the item is deleted or expired)."""
    entries = await service.history(session, account_id=principal.account_id, item_id=item_id)
    return MemoryHistory(item_id=item_id, data=[MemoryHistoryEntry.of(entry) for entry in entries])


@router.post("/search", responses=_EMBEDDINGS)
async def search(
    body: MemorySearch,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    embedder: EmbedderDep,
    vectors: Annotated[VectorIndex, Depends(_vectors)],
) -> MemorySearchResult:
    """Live items whose text holds every word of `query` (no stemming), or with `mode:
    semantic` the items nearest in meaning, best first, under `namespace_prefix` when given;
    `filter` keeps values with equal top-level fields."""
    # A read session although the method is POST: a search writes nothing, and on SQLite the
    # write session would hold the one write connection while a first search by meaning
    # loads the account's vectors (~2 s at 100,000), every put of the process queued behind.
    async with db.session(write=False) as session:
        items = await service.search(
            session, account_id=principal.account_id, data=body, embedder=embedder, vectors=vectors
        )
        return MemorySearchResult(data=[MemoryItemOut.of(item) for item in items])
