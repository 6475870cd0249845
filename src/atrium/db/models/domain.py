"""Domains (phpShort's): a host name that atrium serves by redirecting to its pages.

Substring search needs an index that plain B-trees cannot give; it is dialect-specific and lives
in migration 0002 only: an FTS5 trigram table `domains_fts` kept by triggers on SQLite, a
`pg_trgm` GIN index on PostgreSQL. `domain_counts` (also kept by triggers, so bulk loads and
other processes keep it right) gives the unfiltered list its total without counting rows.

A domain is served only once verified (`verified_at`): its owner published `verification_token`
in DNS, or pointed the name at the deployment (`domains.verification`). Migration 0007 also
gives rows inserted without a token one from the database. The last check's time and, when it
did not verify the domain, its reason are kept for the owner to read (`verification_checked_at`,
`verification_error`).
"""

from __future__ import annotations

import secrets
from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin


def new_verification_token() -> str:
    """32 hex characters, the same shape the database's own default makes (migration 0007)."""
    return secrets.token_hex(16)


# Byte order on both databases, so `sort_by=name` means the same thing everywhere.
NAME_TYPE = String(255).with_variant(String(255, collation="C"), "postgresql")


class Domain(TimestampMixin, Base):
    __tablename__ = "domains"
    __table_args__ = (
        Index("ix_domains_account_id_id", "account_id", "id"),
        Index("ix_domains_account_id_name", "account_id", "name", "id"),
        # Ids are never reused after a delete (phpShort clients key caches by id).
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # Normalised: lower-case ASCII (IDNA punycode), unique in the whole deployment.
    name: Mapped[str] = mapped_column(NAME_TYPE, unique=True)
    index_page: Mapped[str | None] = mapped_column(Text, default=None)
    not_found_page: Mapped[str | None] = mapped_column(Text, default=None)
    verification_token: Mapped[str] = mapped_column(String(32), default=new_verification_token)
    verified_at: Mapped[datetime | None] = mapped_column(default=None)
    # A `domains.verification.VerificationError` value; None once verified or never checked.
    verification_error: Mapped[str | None] = mapped_column(String(32), default=None)
    verification_checked_at: Mapped[datetime | None] = mapped_column(default=None)


class DomainCount(Base):
    """How many domains an account has; maintained by database triggers (migration 0002)."""

    __tablename__ = "domain_counts"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    total: Mapped[int] = mapped_column(default=0)
