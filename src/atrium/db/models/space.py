"""Spaces (phpShort's): a named, colored group of an account's links."""

from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin

# Code point order on both databases, so `sort_by=name` means the same thing everywhere.
SPACE_NAME_TYPE = String(32).with_variant(String(32, collation="C"), "postgresql")


class Space(TimestampMixin, Base):
    __tablename__ = "spaces"
    __table_args__ = (
        UniqueConstraint("account_id", "name", name="uq_spaces_account_id_name"),
        Index("ix_spaces_account_id_id", "account_id", "id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(SPACE_NAME_TYPE)
    color: Mapped[int] = mapped_column(default=1)
