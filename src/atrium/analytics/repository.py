"""SQL for the usage rollup."""

from __future__ import annotations

import datetime
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, SupportsInt, cast

from sqlalchemy import ColumnElement, Table, and_, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.models import Agent, AgentUsageDaily, RunStatus

COUNTERS = (
    "runs",
    # One column per terminal status (a run is counted once, when it ends).
    RunStatus.COMPLETED.value,
    RunStatus.FAILED.value,
    RunStatus.CANCELLED.value,
    "input_tokens",
    "output_tokens",
    "credits_micro",
    "requests",
    "requires_action",
)


@dataclass(frozen=True, slots=True)
class DayUsage:
    day: datetime.date
    counters: dict[str, int]


@dataclass(frozen=True, slots=True)
class AgentUsage:
    agent_id: str
    name: str
    counters: dict[str, int]


def add_usage(
    session: Session,
    *,
    account_id: int,
    agent_id: str,
    day: datetime.date,
    increments: dict[str, int],
) -> None:
    """Add `increments` to the (account, day, agent) row, creating it at zero first.

    One INSERT … ON CONFLICT DO UPDATE: atomic under concurrent writers on PostgreSQL (the row
    lock serialises the increments), and the same statement on SQLite.
    """
    statement = _add_usage_statement(session.get_bind().dialect.name)
    values = {name: increments.get(name, 0) for name in COUNTERS}
    session.connection().execute(
        statement, {"account_id": account_id, "agent_id": agent_id, "day": day, **values}
    )


@functools.cache
def _add_usage_statement(dialect: str) -> Any:
    """Built once per dialect (every finished run executes it; building it costs more CPU than
    running it). The table, not the mapped class: the ORM-enabled INSERT costs more for nothing."""
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, AgentUsageDaily.__table__)
    statement = insert(table)
    return statement.on_conflict_do_update(
        index_elements=[table.c.account_id, table.c.day, table.c.agent_id],
        set_={name: table.c[name] + statement.excluded[name] for name in COUNTERS},
    )


def _as_counters(sums: Sequence[object]) -> dict[str, int]:
    # int(): PostgreSQL sums BIGINT into NUMERIC, which asyncpg hands back as Decimal;
    # None: an agent without usage in the range (outer join).
    return {
        name: int(cast(SupportsInt, value or 0)) for name, value in zip(COUNTERS, sums, strict=True)
    }


def _sums() -> list[ColumnElement[int]]:
    table = AgentUsageDaily.__table__
    return [func.coalesce(func.sum(table.c[name]), 0).label(name) for name in COUNTERS]


def _in_range(
    account_id: int, start: datetime.date, end: datetime.date, agent_id: str | None
) -> ColumnElement[bool]:
    condition = and_(
        AgentUsageDaily.account_id == account_id,
        AgentUsageDaily.day >= start,
        AgentUsageDaily.day <= end,
    )
    if agent_id is not None:
        condition = and_(condition, AgentUsageDaily.agent_id == agent_id)
    return condition


async def usage_by_day(
    session: AsyncSession,
    *,
    account_id: int,
    start: datetime.date,
    end: datetime.date,
    agent_id: str | None,
) -> Sequence[DayUsage]:
    """Summed counters of each day in the range that has usage (days without are absent)."""
    rows = await session.execute(
        select(AgentUsageDaily.day, *_sums())
        .where(_in_range(account_id, start, end, agent_id))
        .group_by(AgentUsageDaily.day)
    )
    return [DayUsage(day=day, counters=_as_counters(sums)) for day, *sums in rows]


async def usage_by_agent(
    session: AsyncSession,
    *,
    account_id: int,
    start: datetime.date,
    end: datetime.date,
    agent_id: str | None,
) -> Sequence[AgentUsage]:
    """Summed counters per agent: every live agent (zeros included) and every deleted agent
    that has usage in the range; oldest agent first. With `agent_id`, that agent only."""
    per_agent = (
        select(AgentUsageDaily.agent_id, *_sums())
        .where(_in_range(account_id, start, end, agent_id))
        .group_by(AgentUsageDaily.agent_id)
        .subquery()
    )
    listed = (
        Agent.id == agent_id
        if agent_id is not None
        else or_(Agent.deleted_at.is_(None), per_agent.c.agent_id.is_not(None))
    )
    rows = await session.execute(
        select(Agent.id, Agent.name, *[per_agent.c[name] for name in COUNTERS])
        .outerjoin(per_agent, per_agent.c.agent_id == Agent.id)
        .where(Agent.account_id == account_id, listed)
        .order_by(Agent.created_at, Agent.id)
    )
    return [
        AgentUsage(agent_id=agent_id, name=name, counters=_as_counters(sums))
        for agent_id, name, *sums in rows
    ]
