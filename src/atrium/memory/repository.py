"""SQL of memory: items by key, id and namespace prefix, text search, history, expiry."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Executable,
    Integer,
    Table,
    and_,
    bindparam,
    column,
    delete,
    func,
    insert,
    literal_column,
    or_,
    select,
    table,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.models import Account, MemoryChange, MemoryItem, MemoryItemHistory
from atrium.kit.cursor import Position, older_than
from atrium.kit.ids import looks_like_id

_FTS = table("memory_items_fts", column("rowid", Integer))
_ITEMS: Final = cast(Table, MemoryItem.__table__)
_HISTORY: Final = cast(Table, MemoryItemHistory.__table__)


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
    if not looks_like_id(item_id):
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


@dataclass(frozen=True, slots=True)
class VectorRows:
    """Items' vectors as an exact scan or the in-memory vectors read them: `vectors` holds the
    rows' float32 bytes concatenated, in the order of `seqs`."""

    seqs: list[int]
    vectors: bytes
    paths: list[str]
    expires: list[datetime | None]


# Straight to the driver, not through SQLAlchemy's result rows: reading the vectors is the
# whole cost of a scan, and the rows' processing was most of it (bench/memory_bench.py).
_RAW_SQL: Final = {
    "sqlite": "SELECT seq, embedding, namespace_path FROM memory_items WHERE account_id = ? "
    "AND embedding_model = ? AND length(embedding) = ? AND expires_at IS NULL AND seq > ? "
    "ORDER BY seq LIMIT ?",
    "postgresql": "SELECT seq, embedding, namespace_path FROM memory_items WHERE account_id = $1 "
    "AND embedding_model = $2 AND length(embedding) = $3 AND expires_at IS NULL AND seq > $4 "
    "ORDER BY seq LIMIT $5",
}


async def vector_rows(
    session: AsyncSession,
    *,
    account_id: int,
    model: str,
    size: int,
    now: datetime,
    expiring: bool,
    after: int,
    limit: int,
) -> VectorRows:
    """Up to `limit` of the account's live items embedded by `model` with vectors of `size`
    bytes, by `seq` after `after`: those without an expiry (`expiring` false) or those with one
    (true; usually few, read through SQLAlchemy, which converts their times)."""
    dialect = session.get_bind().dialect.name
    rows: Sequence[Any]
    if not expiring and dialect in _RAW_SQL:
        connection = await (await session.connection()).get_raw_connection()
        driver: Any = connection.driver_connection
        params = (account_id, model, size, after, limit)
        if dialect == "sqlite":
            cursor = await driver.execute(_RAW_SQL[dialect], params)
            rows = await cursor.fetchall()
            await cursor.close()
        else:
            rows = await driver.fetch(_RAW_SQL[dialect], *params)
        return VectorRows(
            [row[0] for row in rows],
            b"".join([row[1] for row in rows]),
            [row[2] for row in rows],
            [None] * len(rows),
        )
    conditions = [
        MemoryItem.account_id == account_id,
        MemoryItem.embedding_model == model,
        func.length(MemoryItem.embedding) == size,
        MemoryItem.seq > after,
        MemoryItem.expires_at > now if expiring else MemoryItem.expires_at.is_(None),
    ]
    rows = (
        await session.execute(
            select(
                MemoryItem.seq,
                MemoryItem.embedding,
                MemoryItem.namespace_path,
                MemoryItem.expires_at,
            )
            .where(*conditions)
            .order_by(MemoryItem.seq)
            .limit(limit)
        )
    ).all()
    return VectorRows(
        [row[0] for row in rows],
        b"".join(row[1] or b"" for row in rows),
        [row[2] for row in rows],
        [row[3] for row in rows],
    )


# The statements of a write, built once: building one per call (bound values, the upsert's
# `excluded` columns) cost more CPU than the database's work (docs/decisions/0058-memory.md,
# "Cost of a put"). Their values are given when they run.
_LOCK: Final = select(func.pg_advisory_xact_lock(bindparam("lock_key", type_=BigInteger)))
_UPDATED: Final = (
    "value",
    "text",
    "search_text",
    "embedding",
    "embedding_model",
    "expires_at",
    "updated_at",
)


def _upsert(statement: postgresql.Insert | sqlite.Insert) -> Executable:
    return statement.on_conflict_do_update(
        index_elements=[_ITEMS.c.account_id, _ITEMS.c.namespace_path, _ITEMS.c.key],
        set_={name: statement.excluded[name] for name in _UPDATED},
    ).returning(_ITEMS.c.seq, _ITEMS.c.id, _ITEMS.c.created_at)


_UPSERT: Final = {
    "postgresql": _upsert(postgresql.insert(_ITEMS)),
    "sqlite": _upsert(sqlite.insert(_ITEMS)),
}
_CHANGES: Final = cast(Table, MemoryChange.__table__)
# SQLite's REPLACE deletes the old row and inserts one with the next AUTOINCREMENT number.
_CHANGE: Final = {
    "postgresql": postgresql.insert(_CHANGES).on_conflict_do_update(
        index_elements=[_CHANGES.c.item_seq],
        set_={"seq": func.nextval(func.pg_get_serial_sequence("memory_changes", "seq"))},
    ),
    "sqlite": insert(_CHANGES).prefix_with("OR REPLACE"),
}
_ADD_HISTORY: Final = insert(_HISTORY)


def _put_postgresql() -> Executable:
    """PostgreSQL: the upsert, the history row and the change row in one statement (data-
    modifying CTEs), a round trip instead of three. The history's values are bound as
    `history_<column>`."""
    item = (
        postgresql.insert(_ITEMS)
        .values({name: bindparam(name, type_=_ITEMS.c[name].type) for name in _ITEM_COLUMNS})
        .on_conflict_do_update(
            index_elements=[_ITEMS.c.account_id, _ITEMS.c.namespace_path, _ITEMS.c.key],
            set_={name: literal_column(f"excluded.{name}") for name in _UPDATED},
        )
        .returning(_ITEMS.c.seq, _ITEMS.c.id, _ITEMS.c.created_at)
        .cte("item")
    )
    written = [column.name for column in _HISTORY.c if column.name != "item_id"]
    history = (
        insert(_HISTORY)
        .from_select(
            ["item_id", *written],
            select(
                item.c.id,
                *(bindparam(f"history_{name}", type_=_HISTORY.c[name].type) for name in written),
            ),
        )
        .cte("history")
    )
    change = (
        postgresql.insert(_CHANGES)
        .from_select(
            ["account_id", "item_seq"],
            select(bindparam("account_id", type_=_CHANGES.c.account_id.type), item.c.seq),
        )
        .on_conflict_do_update(
            index_elements=[_CHANGES.c.item_seq],
            set_={"seq": func.nextval(func.pg_get_serial_sequence("memory_changes", "seq"))},
        )
        .cte("change")
    )
    return select(item.c.seq, item.c.id, item.c.created_at).add_cte(history, change)


_ITEM_COLUMNS: Final = [column.name for column in _ITEMS.c if column.name != "seq"]
_PUT_POSTGRESQL: Final = _put_postgresql()


def _lock_key(account_id: int) -> dict[str, int]:
    digest = hashlib.sha256(f"atrium-memory:{account_id}".encode()).digest()
    return {"lock_key": int.from_bytes(digest[:8], "big", signed=True)}


async def lock_writes(session: AsyncSession, *, account_id: int) -> None:
    """PostgreSQL: the account's memory writes take turns until they commit, so the numbers of
    their `memory_changes` rows are in commit order and a reader that has seen number n has
    seen every change before it (SQLite has one writer at a time anyway). Taken before any
    row of the write, so two writers never wait on each other's rows while holding it. 63
    bits of SHA-256: the lock's key is a bigint."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(_LOCK, _lock_key(account_id))


async def record_change(session: AsyncSession, *, account_id: int, item_seq: int) -> None:
    """The item's change row, replaced by one numbered after every other change so far."""
    statement = _CHANGE[session.get_bind().dialect.name]
    await session.execute(statement, {"account_id": account_id, "item_seq": item_seq})


@dataclass(frozen=True, slots=True)
class Stored:
    """What the database holds of a written item beyond what its writer gave."""

    seq: int
    id: str
    created_at: datetime


def write_item(session: Session, *, item: dict[str, Any], history: dict[str, Any]) -> Stored:
    """One put, in the caller's transaction: the write lock (`lock_writes`), the item's row
    inserted or, under the same (account, namespace, key), its value, texts, vector, expiry
    and `updated_at` replaced (live or expired: the same row and id), its history row and its
    change row: three statements on SQLite, the lock and one on PostgreSQL. `item` holds
    every column but `seq`; `history` every one but `item_id`, which is the stored row's."""
    connection = session.connection()
    dialect = connection.dialect.name
    account_id = item["account_id"]
    if dialect == "postgresql":
        connection.execute(_LOCK, _lock_key(account_id))
        history_values = {f"history_{name}": value for name, value in history.items()}
        row = connection.execute(_PUT_POSTGRESQL, {**item, **history_values}).one()
        return Stored(row[0], row[1], row[2])
    row = connection.execute(_UPSERT[dialect], item).one()
    stored = Stored(row[0], row[1], row[2])
    connection.execute(_ADD_HISTORY, {**history, "item_id": stored.id})
    connection.execute(_CHANGE[dialect], {"account_id": account_id, "item_seq": stored.seq})
    return stored


async def last_change(session: AsyncSession, *, account_id: int) -> int:
    found = await session.scalar(
        select(func.max(MemoryChange.seq)).where(MemoryChange.account_id == account_id)
    )
    return int(found or 0)


@dataclass(frozen=True, slots=True)
class Change:
    """An item changed after a reader's mark, as it is now: `embedding` None when it is gone
    (deleted, or written without a vector)."""

    seq: int
    item_seq: int
    embedding: bytes | None
    model: str | None
    path: str
    expires_at: datetime | None


async def changes_since(session: AsyncSession, *, account_id: int, after: int) -> list[Change]:
    rows = (
        await session.execute(
            select(
                MemoryChange.seq,
                MemoryChange.item_seq,
                MemoryItem.embedding,
                MemoryItem.embedding_model,
                MemoryItem.namespace_path,
                MemoryItem.expires_at,
            )
            .select_from(MemoryChange)
            .outerjoin(
                MemoryItem,
                and_(
                    MemoryItem.seq == MemoryChange.item_seq,
                    MemoryItem.account_id == MemoryChange.account_id,
                ),
            )
            .where(MemoryChange.account_id == account_id, MemoryChange.seq > after)
            .order_by(MemoryChange.seq)
        )
    ).all()
    return [Change(row[0], row[1], row[2], row[3], row[4] or "", row[5]) for row in rows]


async def by_seqs(
    session: AsyncSession, *, account_id: int, seqs: list[int], now: datetime
) -> dict[int, MemoryItem]:
    rows = (
        await session.scalars(
            select(MemoryItem).where(
                MemoryItem.seq.in_(seqs), MemoryItem.account_id == account_id, _live(now)
            )
        )
    ).all()
    return {row.seq: row for row in rows}


async def history(
    session: AsyncSession, *, account_id: int, item_id: str
) -> Sequence[MemoryItemHistory]:
    if not looks_like_id(item_id):
        return []
    return (
        await session.scalars(
            select(MemoryItemHistory)
            .where(MemoryItemHistory.item_id == item_id, MemoryItemHistory.account_id == account_id)
            .order_by(MemoryItemHistory.created_at.desc(), MemoryItemHistory.id.desc())
        )
    ).all()


def purge_expired(session: Session, *, now: datetime, limit: int) -> int:
    """Delete up to `limit` expired items of any account (their history stays); how many.
    Account by account through the (account_id, expires_at) index, not a scan of the items."""
    expired = (
        select(MemoryItem.seq)
        .select_from(Account)
        .join(
            MemoryItem,
            and_(
                MemoryItem.account_id == Account.id,
                MemoryItem.expires_at.is_not(None),
                MemoryItem.expires_at <= now,
            ),
        )
        .limit(limit)
    )
    deleted = session.execute(
        delete(_ITEMS).where(_ITEMS.c.seq.in_(expired)).returning(_ITEMS.c.seq)
    ).all()
    return len(deleted)
