"""Agents: a named configuration (model, temperature, instructions, …) that runs execute."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text
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
    # The account's default agent, created on demand for runs that name no agent.
    is_default: Mapped[bool] = mapped_column(default=False)
    # Deleted agents are hidden but kept, so past runs and their usage still name them.
    deleted_at: Mapped[datetime | None] = mapped_column(default=None)
