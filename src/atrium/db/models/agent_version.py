"""Agent versions (each config an agent has had, immutable) and aliases that point at them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Float, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin
from atrium.kit.time import utcnow


class AgentVersion(Base):
    """One config an agent had: numbered per agent from 1, never changed once written."""

    __tablename__ = "agent_versions"
    __table_args__ = (UniqueConstraint("agent_id", "number", name="uq_agent_versions_agent_id"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    agent_id: Mapped[str] = mapped_column(ForeignKey("agents.id", ondelete="CASCADE"))
    number: Mapped[int] = mapped_column(Integer)
    # The config as stored on the agent (MCP header values sealed, as there).
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    # SHA-256 of the config's canonical JSON: an edit that changes nothing makes no version.
    content_hash: Mapped[str] = mapped_column(String(64))
    # The version a restore copied (None: an edit, or the agent's creation).
    restored_from: Mapped[int | None] = mapped_column(Integer, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AgentAlias(TimestampMixin, Base):
    """A name (`prod`, `canary`) an agent's runs may use instead of a version number: it points
    at a version, and optionally sends a share of runs (`split_weight`) to a second one."""

    __tablename__ = "agent_aliases"

    agent_id: Mapped[str] = mapped_column(
        ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    split_version: Mapped[int | None] = mapped_column(Integer, default=None)
    split_weight: Mapped[float | None] = mapped_column(Float, default=None)
