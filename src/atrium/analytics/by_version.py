"""Usage by agent version: one agent's finished runs in the range, per version they ran.

Read from the runs themselves (their `agent_version`), not the daily rollup, whose rows are per
agent: a version is a property of each run. Runs from before agents had versions count under
version null.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.analytics.repository import COUNTERS
from atrium.db.models import TERMINAL_STATUSES, Run


@dataclass(frozen=True, slots=True)
class VersionUsage:
    version: int | None
    counters: dict[str, int]


async def usage_by_version(
    session: AsyncSession,
    *,
    account_id: int,
    agent_id: str,
    start: datetime.date,
    end: datetime.date,
) -> Sequence[VersionUsage]:
    """The counters of `analytics.repository.COUNTERS` per version, newest version first, for
    the agent's runs that finished on a UTC day of [start, end]."""
    since = datetime.datetime.combine(start, datetime.time(), datetime.UTC)
    until = datetime.datetime.combine(
        end + datetime.timedelta(days=1), datetime.time(), datetime.UTC
    )
    rows = await session.execute(
        select(
            Run.agent_version,
            Run.status,
            func.count(),
            func.coalesce(func.sum(Run.input_tokens), 0),
            func.coalesce(func.sum(Run.output_tokens), 0),
            func.coalesce(func.sum(Run.credits_micro), 0),
            func.coalesce(func.sum(Run.requests), 0),
            func.coalesce(func.sum(Run.waits), 0),
        )
        .where(
            Run.account_id == account_id,
            Run.agent_id == agent_id,
            Run.status.in_([str(status) for status in TERMINAL_STATUSES]),
            Run.finished_at >= since,
            Run.finished_at < until,
        )
        .group_by(Run.agent_version, Run.status)
    )
    found: dict[int | None, dict[str, int]] = {}
    for version, status, runs, input_tokens, output_tokens, credits, requests, waits in rows:
        counters = found.setdefault(
            version,
            dict.fromkeys(COUNTERS, 0),
        )
        counters["runs"] += int(runs)
        counters[str(status)] += int(runs)
        counters["input_tokens"] += int(input_tokens)
        counters["output_tokens"] += int(output_tokens)
        counters["credits_micro"] += int(credits)
        counters["requests"] += int(requests)
        counters["requires_action"] += int(waits)
    ordered = sorted(found, key=lambda version: -1 if version is None else version, reverse=True)
    return [VersionUsage(version=version, counters=found[version]) for version in ordered]
