"""Schedules: a prompt an agent runs on a cron expression, and the record of every firing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin
from atrium.kit.time import utcnow


class Schedule(TimestampMixin, Base):
    """A cron expression in an IANA zone that queues a run of `prompt` at each fire time."""

    __tablename__ = "schedules"
    __table_args__ = (
        Index("ix_schedules_account_id_created_at", "account_id", "created_at"),
        # The firing loop's scan: schedules whose next fire time has come.
        Index("ix_schedules_next_fire_at", "next_fire_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    agent_id: Mapped[str] = mapped_column(String(40))
    # The version number or alias name its runs use (`agent_id@agent_ref`); None: the agent's
    # live version when each run is queued.
    agent_ref: Mapped[str | None] = mapped_column(String(40), default=None)
    prompt: Mapped[str] = mapped_column(Text)
    cron: Mapped[str] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64))
    # None: each firing starts a new thread; else the thread every firing continues.
    thread_id: Mapped[str | None] = mapped_column(String(40), default=None)
    schedule_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    # Per-run config on top of the agent's (`RunConfig`'s keys), or None.
    config: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    starts_at: Mapped[datetime | None] = mapped_column(default=None)
    ends_at: Mapped[datetime | None] = mapped_column(default=None)
    paused: Mapped[bool] = mapped_column(default=False)
    on_overlap: Mapped[str] = mapped_column(String(16))
    on_missed: Mapped[str] = mapped_column(String(16))
    max_credits_per_day_micro: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # The first fire time not yet handled (None: none left, or paused). Only the transaction
    # that holds the row moves it forward, together with the firings it writes.
    next_fire_at: Mapped[datetime | None] = mapped_column(default=None)


class ScheduleFiring(Base):
    """One fire time of a schedule: fired (with its run) or skipped (with the reason).

    The unique (schedule, fire time) key is what makes a fire time produce one run however
    many processes reach it: the run is inserted in the transaction that inserts this row.
    """

    __tablename__ = "schedule_firings"
    __table_args__ = (
        UniqueConstraint("schedule_id", "fire_at", name="uq_schedule_firings_schedule_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    schedule_id: Mapped[str] = mapped_column(ForeignKey("schedules.id", ondelete="CASCADE"))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    fire_at: Mapped[datetime] = mapped_column()
    # "cron" (a fire time of the expression) or "manual" (`POST …/trigger`).
    trigger: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(32), default=None)
    detail: Mapped[str | None] = mapped_column(Text, default=None)
    # The run a fired firing queued; null once the run's thread was deleted.
    run_id: Mapped[str | None] = mapped_column(
        ForeignKey("runs.id", ondelete="SET NULL"), default=None, index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
