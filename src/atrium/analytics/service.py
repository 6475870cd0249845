"""Rules for usage: recording finished runs in the rollup, and the usage report."""

from __future__ import annotations

import datetime
import re
from typing import Final

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.agents import repository as agents_repository
from atrium.agents.errors import AgentNotFound
from atrium.analytics import repository
from atrium.analytics.by_version import usage_by_version
from atrium.analytics.errors import UsageRangeInvalid
from atrium.analytics.schemas import (
    AgentUsageOut,
    DailyUsage,
    UsageCounters,
    UsageReport,
    VersionUsageOut,
)
from atrium.db.models import TERMINAL_STATUSES, RunStatus
from atrium.errors import InvalidParameter
from atrium.kit.time import as_utc

DEFAULT_RANGE_DAYS: Final = 30
MAX_RANGE_DAYS: Final = 366
MICRO: Final = 1_000_000
_DAY: Final = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def parse_day(parameter: str, value: str | None) -> datetime.date | None:
    """`YYYY-MM-DD` (ISO 8601 calendar date) or absent; anything else is a 400 on `parameter`."""
    if value is None:
        return None
    if not _DAY.match(value):
        raise InvalidParameter(parameter, f"{parameter} must be a date written YYYY-MM-DD")
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:  # well-formed, but a day no calendar has: 2026-02-30, 2026-13-01
        raise InvalidParameter(parameter, f"{parameter} {value} is not a calendar date") from None


def record_run_usage(
    session: Session,
    *,
    account_id: int,
    agent_id: str,
    day: datetime.date,
    status: RunStatus,
    input_tokens: int,
    output_tokens: int,
    credits_micro: int,
    requests: int,
    waits: int = 0,
) -> None:
    """Add one finished run (status: completed | failed | cancelled) to the rollup. Called in
    the transaction that commits the run's terminal state (synchronous: the worker's writes
    are; an async session calls it through `run_sync`)."""
    if status not in TERMINAL_STATUSES:
        raise ValueError(f"status must be a terminal one, not {status!r}")
    amounts = {
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "credits_micro": credits_micro,
        "requests": requests,
        "requires_action": waits,
    }
    if isinstance(day, datetime.datetime):  # a finish time passed as is: count its UTC day
        day = as_utc(day).date()
    negative = [name for name, value in amounts.items() if value < 0]
    if negative:
        raise ValueError(f"{negative[0]} must not be negative")
    repository.add_usage(
        session,
        account_id=account_id,
        agent_id=agent_id,
        day=day,
        increments={"runs": 1, status: 1, **amounts},
    )


def resolve_range(
    start: datetime.date | None, end: datetime.date | None, *, today: datetime.date
) -> tuple[datetime.date, datetime.date]:
    """Defaults: end = today (UTC), start = end - 29 days; start <= end; at most 366 days."""
    end = end if end is not None else today
    if start is None:
        try:
            start = end - datetime.timedelta(days=DEFAULT_RANGE_DAYS - 1)
        except OverflowError:  # an end_date in the first days of year 1
            start = datetime.date.min
    if start > end:
        raise UsageRangeInvalid("start_date must be on or before end_date")
    if (end - start).days + 1 > MAX_RANGE_DAYS:
        raise UsageRangeInvalid(
            f"the range from start_date to end_date is over {MAX_RANGE_DAYS} days"
        )
    return start, end


def _counters(values: dict[str, int]) -> dict[str, float]:
    """The counters as the report shows them: credits rather than micro-credits."""
    shown: dict[str, float] = {
        name: value for name, value in values.items() if name != "credits_micro"
    }
    shown["credits"] = values.get("credits_micro", 0) / MICRO
    return shown


async def usage_report(
    session: AsyncSession,
    *,
    account_id: int,
    start: datetime.date | None,
    end: datetime.date | None,
    agent_id: str | None,
    today: datetime.date,
) -> UsageReport:
    """Totals, one row per day of the range (zeros included) and one row per agent."""
    start, end = resolve_range(start, end, today=today)
    if agent_id is not None:
        # A deleted agent's usage stays readable; an unknown or foreign id is a 404.
        agent = await agents_repository.get_any(session, account_id=account_id, agent_id=agent_id)
        if agent is None:
            raise AgentNotFound(agent_id)
    by_day = {
        row.day: row.counters
        for row in await repository.usage_by_day(
            session, account_id=account_id, start=start, end=end, agent_id=agent_id
        )
    }
    by_agent = await repository.usage_by_agent(
        session, account_id=account_id, start=start, end=end, agent_id=agent_id
    )
    zero = dict.fromkeys(repository.COUNTERS, 0)
    totals = dict(zero)
    daily: list[DailyUsage] = []
    for offset in range((end - start).days + 1):
        day = start + datetime.timedelta(days=offset)
        counters = by_day.get(day, zero)
        for name in repository.COUNTERS:
            totals[name] += counters[name]
        daily.append(DailyUsage(date=day.isoformat(), **_counters(counters)))
    versions = None
    if agent_id is not None:
        versions = [
            VersionUsageOut(version=row.version, **_counters(row.counters))
            for row in await usage_by_version(
                session, account_id=account_id, agent_id=agent_id, start=start, end=end
            )
        ]
    return UsageReport(
        start_date=start.isoformat(),
        end_date=end.isoformat(),
        agent_id=agent_id,
        totals=UsageCounters(**_counters(totals)),
        daily=daily,
        agents=[
            AgentUsageOut(agent_id=row.agent_id, name=row.name, **_counters(row.counters))
            for row in by_agent
        ],
        versions=versions,
    )
