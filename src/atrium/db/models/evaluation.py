"""Stored evals: datasets of cases run on agents and scored (`atrium.evals`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base
from atrium.kit.time import utcnow


class Evaluation(Base):
    """One eval: a dataset's cases, each run on each agent and scored by the client.

    The results are one JSON document written in one insert: an eval is read whole (the
    side-by-side table) and never updated, so rows per case would add joins and nothing else.
    Credits, latency and version in it are copied from the stored runs at store time, not taken
    from the client (docs/decisions/0062-evals.md)."""

    __tablename__ = "evals"
    __table_args__ = (Index("ix_evals_account_id_created_at", "account_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    dataset_name: Mapped[str] = mapped_column(String(255))
    dataset_sha256: Mapped[str] = mapped_column(String(64))
    agents: Mapped[list[Any]] = mapped_column(JSON)
    cases: Mapped[list[Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
