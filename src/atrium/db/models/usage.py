"""The usage rollup: one row per (account, day, agent), incremented as each run finishes.

Analytics reads these rows instead of the runs table, so a usage query touches at most
days x agents rows however many runs an account has.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import BigInteger, Date, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base


class AgentUsageDaily(Base):
    __tablename__ = "agent_usage_daily"
    __table_args__ = (
        Index("ix_agent_usage_daily_agent_id_day", "agent_id", "day"),
        # SQLite: cluster the rows by the key, so a date-range scan reads no second b-tree.
        {"sqlite_with_rowid": False},
    )

    # Key order serves the main query: one account, a range of days, every agent.
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    agent_id: Mapped[str] = mapped_column(
        String(40), ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True
    )
    runs: Mapped[int] = mapped_column(Integer, default=0)
    completed: Mapped[int] = mapped_column(Integer, default=0)
    failed: Mapped[int] = mapped_column(Integer, default=0)
    cancelled: Mapped[int] = mapped_column(Integer, default=0)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    # Integer micro-credits keep sums exact; the API shows credits = micro / 1e6.
    credits_micro: Mapped[int] = mapped_column(BigInteger, default=0)
    requests: Mapped[int] = mapped_column(BigInteger, default=0)
    # How many times the runs waited for their caller (`requires_action`), counted at the finish.
    requires_action: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
