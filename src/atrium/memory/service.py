"""Memory's rules: upsert by (namespace, key), expiry, search, and a history row per write."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.db.models import MemoryItem, MemoryItemHistory
from atrium.errors import InvalidParameter
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import new_id
from atrium.kit.time import as_utc, utcnow
from atrium.memory import namespaces, repository
from atrium.memory.embedders import Embedder
from atrium.memory.errors import MemoryItemNotFound
from atrium.memory.schemas import MemoryPut, MemorySearch
from atrium.memory.vectors import VectorIndex

MAX_VALUE_BYTES: Final = 64 * 1024
MAX_LIST_LIMIT: Final = 200
# Over-fetched for `filter`, which is checked here rather than in SQL (JSON paths differ
# between the two databases): the first matches among this many text hits are returned.
_FILTER_SCAN: Final = 500
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Writer:
    """Who writes: an API key (direct calls) or a run's tool call."""

    api_key_id: int | None = None
    run_id: str | None = None
    tool_call_id: str | None = None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _record(
    session: AsyncSession, item: MemoryItem, action: str, writer: Writer, value: Any
) -> None:
    session.add(
        MemoryItemHistory(
            id=new_id("memh"),
            item_id=item.id,
            account_id=item.account_id,
            action=action,
            namespace=list(item.namespace),
            key=item.key,
            value=value,
            api_key_id=writer.api_key_id,
            run_id=writer.run_id,
            tool_call_id=writer.tool_call_id,
        )
    )


async def put_item(
    db: Database,
    *,
    account_id: int,
    data: MemoryPut,
    writer: Writer,
    embedder: Embedder | None = None,
) -> MemoryItem:
    """Create the item, or replace the value of the one under the same (namespace, key), in a
    transaction of its own (committed when this returns). The item returned is not attached
    to a session."""
    segments = namespaces.check(data.namespace, parameter="namespace")
    if len(json.dumps(data.value, separators=(",", ":"))) > MAX_VALUE_BYTES:
        raise InvalidParameter("value", f"value is over {MAX_VALUE_BYTES} bytes as JSON")
    search_text = data.text if data.text is not None else " ".join(_strings(data.value))
    embedding: bytes | None = None
    if embedder is not None and search_text.strip():
        vectors = await embedder.embed([search_text], kind="document")
        embedding = vectors[0].tobytes()
    path = namespaces.to_path(segments)
    model = embedder.name if embedder is not None and embedding else None

    def write(session: Session) -> MemoryItem:
        # The time is read under the account's write lock, as the changes are numbered.
        now = utcnow()
        fields: dict[str, Any] = {
            "value": data.value,
            "text": data.text,
            "search_text": search_text,
            "embedding": embedding,
            "embedding_model": model,
            "expires_at": now + timedelta(seconds=data.ttl_seconds) if data.ttl_seconds else None,
            "updated_at": now,
        }
        given = {"account_id": account_id, "namespace": segments, "namespace_path": path}
        stored = repository.write_item(
            session,
            item={**given, "id": new_id("mem"), "key": data.key, "created_at": now, **fields},
            history=_history(given, data.key, "written", writer, data.value),
        )
        return MemoryItem(
            seq=stored.seq,
            id=stored.id,
            key=data.key,
            created_at=stored.created_at,
            **given,
            **fields,
        )

    return await in_transaction(db, write)


async def in_transaction(db: Database, work: Callable[[Session], T]) -> T:
    """`work` in a write transaction of its own. SQLite: the whole transaction in one hand-off
    to the writer thread (`Database.write_sync`), not one per statement
    (docs/decisions/0058-memory.md, "Cost of a put"). PostgreSQL: on the main pool
    (`write_sync`'s few connections are the write batcher's)."""
    if db.sqlite:
        return await db.write_sync(work)
    async with db.transaction() as session:
        return await session.run_sync(work)


def _history(
    item: dict[str, Any], key: str, action: str, writer: Writer, value: Any
) -> dict[str, Any]:
    return {
        "id": new_id("memh"),
        "account_id": item["account_id"],
        "action": action,
        "namespace": list(item["namespace"]),
        "key": key,
        "value": value,
        "api_key_id": writer.api_key_id,
        "run_id": writer.run_id,
        "tool_call_id": writer.tool_call_id,
        "created_at": utcnow(),
    }


async def get_item(session: AsyncSession, *, account_id: int, item_id: str) -> MemoryItem:
    item = await repository.live_by_id(
        session, account_id=account_id, item_id=item_id, now=utcnow()
    )
    if item is None:
        raise MemoryItemNotFound("item_id", item_id)
    return item


async def get_by_key(
    session: AsyncSession, *, account_id: int, namespace: str, key: str
) -> MemoryItem:
    segments = namespaces.parse(namespace, parameter="namespace", allow_empty=False)
    item = await repository.by_key(
        session, account_id=account_id, namespace_path=namespaces.to_path(segments), key=key
    )
    if item is None or (item.expires_at is not None and as_utc(item.expires_at) <= utcnow()):
        raise MemoryItemNotFound("key", key)
    return item


async def delete_item(
    session: AsyncSession, *, account_id: int, item_id: str, writer: Writer
) -> str:
    await repository.lock_writes(session, account_id=account_id)
    item = await get_item(session, account_id=account_id, item_id=item_id)
    _record(session, item, "deleted", writer, None)
    await session.delete(item)
    await session.flush()
    await repository.record_change(session, account_id=account_id, item_seq=item.seq)
    return item.id


async def list_items(
    session: AsyncSession,
    *,
    account_id: int,
    namespace_prefix: str,
    limit: int,
    cursor: str | None,
) -> tuple[Sequence[MemoryItem], str | None]:
    segments = namespaces.parse(namespace_prefix, parameter="namespace_prefix", allow_empty=True)
    rows = await repository.list_page(
        session,
        account_id=account_id,
        prefix_path=namespaces.to_path(segments),
        now=utcnow(),
        limit=limit,
        position=decode_cursor(cursor) if cursor else None,
    )
    return split_page(rows, limit)


async def search(
    session: AsyncSession,
    *,
    account_id: int,
    data: MemorySearch,
    embedder: Embedder | None = None,
    vectors: VectorIndex | None = None,
) -> list[MemoryItem]:
    """Items holding every word of the query (or nearest in meaning), best first; `filter`
    keeps those whose value has equal top-level fields."""
    segments = namespaces.check(data.namespace_prefix or [], parameter="namespace_prefix")
    found: Sequence[MemoryItem]
    if data.mode == "semantic":
        if embedder is None:
            raise InvalidParameter(
                "mode", "search by meaning needs an embeddings model (ATRIUM_EMBEDDINGS_MODEL)"
            )
        found = await _nearest(
            session,
            account_id=account_id,
            embedder=embedder,
            vectors=vectors or _SCAN,
            query=data.query,
            prefix_path=namespaces.to_path(segments),
            count=_FILTER_SCAN if data.filter else data.limit,
        )
        return _filtered(found, data)
    terms = repository.words(data.query)
    if not terms:
        # Nothing to match (only punctuation or symbols): no item holds it.
        return []
    found = await repository.search(
        session,
        account_id=account_id,
        terms=terms,
        prefix_path=namespaces.to_path(segments),
        now=utcnow(),
        limit=_FILTER_SCAN if data.filter else data.limit,
    )
    return _filtered(found, data)


# Without a process's index: every search scans the database.
_SCAN: Final = VectorIndex(0)


async def _nearest(
    session: AsyncSession,
    *,
    account_id: int,
    embedder: Embedder,
    vectors: VectorIndex,
    query: str,
    prefix_path: str,
    count: int,
) -> list[MemoryItem]:
    """Exact: every live vector of the account under the prefix, by dot product (kept in
    memory by `vectors` when they fit its budget, else read from the database)."""
    vector = (await embedder.embed([query], kind="query"))[0]
    for _ in range(2):
        now = utcnow()
        seqs = await vectors.nearest(
            session,
            account_id=account_id,
            model=embedder.name,
            query=vector,
            prefix_path=prefix_path,
            now=now,
            count=count,
        )
        rows = await repository.by_seqs(session, account_id=account_id, seqs=seqs, now=now)
        missing = [seq for seq in seqs if seq not in rows]
        if not missing:
            break
        # Gone without a change row (or expired since): forgotten, and the search run again
        # once so that they do not take the places of live items.
        vectors.forget((account_id, embedder.name, len(vector)), missing)
    return [rows[seq] for seq in seqs if seq in rows]


def _filtered(found: Sequence[MemoryItem], data: MemorySearch) -> list[MemoryItem]:
    wanted = data.filter
    if wanted:
        found = [
            item
            for item in found
            if isinstance(item.value, dict)
            and all(item.value.get(name, _MISSING) == value for name, value in wanted.items())
        ]
    return list(found[: data.limit])


_MISSING: Final = object()


async def history(
    session: AsyncSession, *, account_id: int, item_id: str
) -> Sequence[MemoryItemHistory]:
    entries = await repository.history(session, account_id=account_id, item_id=item_id)
    if not entries:
        raise MemoryItemNotFound("item_id", item_id)
    return entries
