"""SQL of memory: items by key, id and namespace prefix, text search, history, expiry."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from sqlalchemy import (
    ColumnElement,
    Integer,
    and_,
    column,
    delete,
    func,
    literal_column,
    or_,
    select,
    table,
)
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import MemoryItem, MemoryItemHistory
from atrium.kit.cursor import Position, older_than

ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_FTS = table("memory_items_fts", column("rowid", Integer))
# Expired items removed per write: enough to keep up with writes, small enough to stay cheap.
PURGE_BATCH: Final = 100


def _live(now: datetime) -> ColumnElement[bool]:
    return or_(MemoryItem.expires_at.is_(None), MemoryItem.expires_at > now)


def _under(prefix_path: str) -> ColumnElement[bool]:
    escaped = prefix_path.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return MemoryItem.namespace_path.like(f"{escaped}%", escape="\\")


async def by_key(
    session: AsyncSession, *, account_id: int, namespace_path: str, key: str
) -> MemoryItem | None:
    """The row under the key, live or expired (a write replaces an expired one in place)."""
    return await session.scalar(
        select(MemoryItem).where(
            MemoryItem.account_id == account_id,
            MemoryItem.namespace_path == namespace_path,
            MemoryItem.key == key,
        )
    )


async def live_by_id(
    session: AsyncSession, *, account_id: int, item_id: str, now: datetime
) -> MemoryItem | None:
    if not ID_PATTERN.match(item_id):
        return None
    return await session.scalar(
        select(MemoryItem).where(
            MemoryItem.id == item_id, MemoryItem.account_id == account_id, _live(now)
        )
    )


async def list_page(
    session: AsyncSession,
    *,
    account_id: int,
    prefix_path: str,
    now: datetime,
    limit: int,
    position: Position | None,
) -> Sequence[MemoryItem]:
    query = select(MemoryItem).where(MemoryItem.account_id == account_id, _live(now))
    if prefix_path:
        query = query.where(_under(prefix_path))
    if position is not None:
        query = query.where(older_than(MemoryItem.created_at, MemoryItem.id, position))
    query = query.order_by(MemoryItem.created_at.desc(), MemoryItem.id.desc()).limit(limit + 1)
    return (await session.scalars(query)).all()


_WORD = re.compile(r"\w+")


def words(query: str) -> list[str]:
    """The query's words, as both tokenizers split text (letters and digits, lower-cased)."""
    return [word.lower() for word in _WORD.findall(query)][:32]


async def search(
    session: AsyncSession,
    *,
    account_id: int,
    terms: list[str],
    prefix_path: str,
    now: datetime,
    limit: int,
) -> Sequence[MemoryItem]:
    """Live items holding every term, best match first (bm25 / ts_rank)."""
    conditions = [MemoryItem.account_id == account_id, _live(now)]
    if prefix_path:
        conditions.append(_under(prefix_path))
    if session.get_bind().dialect.name == "sqlite":
        # Each word quoted: FTS5 reads the text as words, never as its query syntax.
        match = " ".join('"' + term.replace('"', '""') + '"' for term in terms)
        query = (
            select(MemoryItem)
            .join(_FTS, _FTS.c.rowid == MemoryItem.seq)
            .where(literal_column("memory_items_fts").op("MATCH")(match), *conditions)
            .order_by(literal_column("bm25(memory_items_fts)"), MemoryItem.id)
        )
    else:
        vector = func.to_tsvector(literal_column("'simple'"), MemoryItem.search_text)
        tsquery = func.plainto_tsquery(literal_column("'simple'"), " ".join(terms))
        query = (
            select(MemoryItem)
            .where(vector.op("@@")(tsquery), *conditions)
            .order_by(func.ts_rank(vector, tsquery).desc(), MemoryItem.id)
        )
    return (await session.scalars(query.limit(limit))).all()


async def embedded(
    session: AsyncSession,
    *,
    account_id: int,
    model: str,
    size: int,
    prefix_path: str,
    now: datetime,
) -> tuple[list[int], bytes]:
    """The `seq` and vector bytes (concatenated, in the same order) of the account's live
    items embedded by `model` with vectors of `size` bytes: what an exact scan reads."""
    conditions = [
        MemoryItem.account_id == account_id,
        MemoryItem.embedding_model == model,
        func.length(MemoryItem.embedding) == size,
        _live(now),
    ]
    if prefix_path:
        conditions.append(_under(prefix_path))
    rows = (
        await session.execute(select(MemoryItem.seq, MemoryItem.embedding).where(*conditions))
    ).all()
    return [row[0] for row in rows], b"".join(row[1] or b"" for row in rows)


async def by_seqs(session: AsyncSession, *, seqs: list[int]) -> dict[int, MemoryItem]:
    rows = (await session.scalars(select(MemoryItem).where(MemoryItem.seq.in_(seqs)))).all()
    return {row.seq: row for row in rows}


async def history(
    session: AsyncSession, *, account_id: int, item_id: str
) -> Sequence[MemoryItemHistory]:
    if not ID_PATTERN.match(item_id):
        return []
    return (
        await session.scalars(
            select(MemoryItemHistory)
            .where(MemoryItemHistory.item_id == item_id, MemoryItemHistory.account_id == account_id)
            .order_by(MemoryItemHistory.created_at.desc(), MemoryItemHistory.id.desc())
        )
    ).all()


async def purge_expired(session: AsyncSession, *, account_id: int, now: datetime) -> None:
    """Delete up to `PURGE_BATCH` of the account's expired items (their history stays)."""
    expired = (
        select(MemoryItem.seq)
        .where(
            and_(
                MemoryItem.account_id == account_id,
                MemoryItem.expires_at.is_not(None),
                MemoryItem.expires_at <= now,
            )
        )
        .limit(PURGE_BATCH)
    )
    await session.execute(delete(MemoryItem).where(MemoryItem.seq.in_(expired)))
