"""Memory blocks: named, size-limited texts of an account pinned into its agents' instructions,
and every version of each."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin
from atrium.kit.time import utcnow


class MemoryBlock(TimestampMixin, Base):
    """The current text of a block, unique by label in its account. `version` counts its
    changes from 1 (creation); every version is kept in `memory_block_versions`."""

    __tablename__ = "memory_blocks"
    __table_args__ = (
        UniqueConstraint("account_id", "label", name="uq_memory_blocks_label"),
        Index("ix_memory_blocks_account_id_created_at", "account_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(Text)
    # Characters `value` may hold; a write past it is refused, never truncated.
    char_limit: Mapped[int] = mapped_column(Integer)
    version: Mapped[int] = mapped_column(Integer)


class MemoryBlockVersion(Base):
    """One version of a block (or its delete), with who made it: an API key, or a run's tool
    call. No foreign key to the block: the history outlives its delete."""

    __tablename__ = "memory_block_versions"
    __table_args__ = (
        UniqueConstraint("block_id", "version", name="uq_memory_block_versions_version"),
        Index("ix_memory_block_versions_account_id_label", "account_id", "label", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    block_id: Mapped[str] = mapped_column(String(40))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    label: Mapped[str] = mapped_column(String(64))
    version: Mapped[int] = mapped_column(Integer)
    # created, updated, appended, replaced or deleted.
    action: Mapped[str] = mapped_column(String(16))
    # The text and limit after the change (a delete keeps the last ones).
    value: Mapped[str] = mapped_column(Text)
    char_limit: Mapped[int] = mapped_column(Integer)
    api_key_id: Mapped[int | None] = mapped_column(default=None)
    run_id: Mapped[str | None] = mapped_column(String(40), default=None)
    tool_call_id: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
