"""Agents: a named configuration (model, temperature, instructions, …) that runs execute."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin


class Agent(TimestampMixin, Base):
    __tablename__ = "agents"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str] = mapped_column(Text, default="")
    # {"model", "temperature", "instructions", "max_output_tokens", "tools"}
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The number of the version `config` is (`agent_versions`): what a run of the agent records.
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    # The account's default agent, created on demand for runs that name no agent.
    is_default: Mapped[bool] = mapped_column(default=False)
    # Deleted agents are hidden but kept, so past runs and their usage still name them.
    deleted_at: Mapped[datetime | None] = mapped_column(default=None)


# At most one live default agent per account, so concurrent first runs cannot create two
# (the insert that loses the race does nothing: ON CONFLICT DO NOTHING on this index). Plain
# SQL text, identical in the index and in the ON CONFLICT target, so SQLite sees them match.
DEFAULT_AGENT_PREDICATE = text("is_default AND deleted_at IS NULL")
Index(
    "uq_agents_default_per_account",
    Agent.account_id,
    unique=True,
    sqlite_where=DEFAULT_AGENT_PREDICATE,
    postgresql_where=DEFAULT_AGENT_PREDICATE,
)
