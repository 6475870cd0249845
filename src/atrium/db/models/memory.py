"""Memory: JSON items an account keeps across threads, and the record of every write to them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin
from atrium.kit.time import utcnow


class MemoryItem(TimestampMixin, Base):
    """One value under (namespace, key) of an account.

    `seq` is the integer row key the text index needs (SQLite's FTS5 `memory_items_fts` of
    migration 0015 points at it); `id` is the public name.
    """

    __tablename__ = "memory_items"
    __table_args__ = (
        UniqueConstraint("account_id", "namespace_path", "key", name="uq_memory_items_key"),
        Index("ix_memory_items_account_id_expires_at", "account_id", "expires_at"),
    )

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    id: Mapped[str] = mapped_column(String(40), unique=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # The segments as given, and joined by "/" with a trailing "/" so that a prefix of
    # segments is a prefix of the text (segments never hold "/").
    namespace: Mapped[list[str]] = mapped_column(JSON)
    namespace_path: Mapped[str] = mapped_column(String(600))
    key: Mapped[str] = mapped_column(String(200))
    value: Mapped[Any] = mapped_column(JSON)
    text: Mapped[str | None] = mapped_column(Text, default=None)
    # What text search matches: `text` when given, else the value's strings.
    search_text: Mapped[str] = mapped_column(Text)
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    # The search text's unit vector (float32 bytes) and the embedder that made it (migration
    # 0021); None when no embedder is configured or the text is empty.
    embedding: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    embedding_model: Mapped[str | None] = mapped_column(String(200), default=None)


class MemoryItemHistory(Base):
    """One write or delete of an item, with who made it: an API key, or a run's tool call.

    Kept after the item is gone (no foreign key to it), so a deleted fact still says who
    wrote and who removed it."""

    __tablename__ = "memory_item_history"
    __table_args__ = (Index("ix_memory_item_history_item_id", "item_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(40))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # "written" or "deleted".
    action: Mapped[str] = mapped_column(String(16))
    namespace: Mapped[list[str]] = mapped_column(JSON)
    key: Mapped[str] = mapped_column(String(200))
    # The value written (None for a delete).
    value: Mapped[Any] = mapped_column(JSON, nullable=True, default=None)
    api_key_id: Mapped[int | None] = mapped_column(default=None)
    run_id: Mapped[str | None] = mapped_column(String(40), default=None)
    tool_call_id: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class MemoryChange(Base):
    """The latest write or delete of each item, numbered in commit order per account: what a
    process's in-memory vectors (atrium.memory.vectors) read to catch up with the other
    processes' writes (docs/decisions/0065-memory-vector-cache.md).

    One row per item (a write replaces the item's row), so the table stays as large as the
    items plus the deleted ones. `seq` never goes back: AUTOINCREMENT on SQLite, where a plain
    integer key could give a replaced maximum row's number again; a sequence on PostgreSQL."""

    __tablename__ = "memory_changes"
    __table_args__ = (
        Index("ix_memory_changes_account_id_seq", "account_id", "seq"),
        UniqueConstraint("item_seq", name="uq_memory_changes_item_seq"),
        {"sqlite_autoincrement": True},
    )

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # memory_items.seq; no foreign key: the row of a deleted item says it is gone.
    item_seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"))
