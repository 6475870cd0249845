"""SQL of schedules and their firings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final, cast

from sqlalchemy import Table, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.db.models import Agent, Run, RunStatus, Schedule, ScheduleFiring, Thread
from atrium.kit.cursor import Position, older_than
from atrium.runs.lifecycle.busy_threads import UNFINISHED, UnfinishedRun
from atrium.runs.lifecycle.run_queue import from_states

# What `new_id("sch")` makes; anything else is nobody's schedule (and never sent to SQL).
ID_PATTERN: Final = re.compile(r"^sch_[A-Za-z0-9]{1,36}$")
_FIRINGS = cast(Table, ScheduleFiring.__table__)
_FINISHED: Final = tuple(status for status in RunStatus if status not in UNFINISHED)


# --- the API's reads and writes (the request's session) ---------------------------------------
async def count(session: AsyncSession, *, account_id: int) -> int:
    found = await session.scalar(
        select(func.count()).select_from(Schedule).where(Schedule.account_id == account_id)
    )
    return int(found or 0)


async def get(session: AsyncSession, *, account_id: int, schedule_id: str) -> Schedule | None:
    if not ID_PATTERN.match(schedule_id):
        return None
    return await session.scalar(
        select(Schedule).where(Schedule.id == schedule_id, Schedule.account_id == account_id)
    )


async def page(
    session: AsyncSession, *, account_id: int, before: Position | None, limit: int
) -> Sequence[Schedule]:
    """The account's schedules newest first, strictly after the cursor position `before`."""
    query = select(Schedule).where(Schedule.account_id == account_id)
    if before is not None:
        query = query.where(older_than(Schedule.created_at, Schedule.id, before))
    query = query.order_by(Schedule.created_at.desc(), Schedule.id.desc()).limit(limit)
    return (await session.scalars(query)).all()


async def firings(
    session: AsyncSession,
    *,
    schedule_id: str,
    status: str | None,
    before: Position | None,
    limit: int,
) -> Sequence[ScheduleFiring]:
    """A schedule's firings, latest fire time first (the cursor's time is the fire time)."""
    query = select(ScheduleFiring).where(ScheduleFiring.schedule_id == schedule_id)
    if status is not None:
        query = query.where(ScheduleFiring.status == status)
    if before is not None:
        query = query.where(older_than(ScheduleFiring.fire_at, ScheduleFiring.id, before))
    query = query.order_by(ScheduleFiring.fire_at.desc(), ScheduleFiring.id.desc()).limit(limit)
    return (await session.scalars(query)).all()


async def thread_of_account(session: AsyncSession, *, account_id: int, thread_id: str) -> bool:
    found = await session.scalar(
        select(Thread.id).where(Thread.id == thread_id, Thread.account_id == account_id)
    )
    return found is not None


async def usage_by_day(
    session: AsyncSession, *, schedule_id: str, start: datetime, end: datetime
) -> list[Any]:
    """The schedule's finished runs in [start, end) by UTC day of their end: counts by status
    and the sums of their counters."""
    day = func.date(Run.finished_at)
    rows = await session.execute(
        select(
            day.label("day"),
            Run.status,
            func.count().label("runs"),
            func.coalesce(func.sum(Run.input_tokens), 0).label("input_tokens"),
            func.coalesce(func.sum(Run.output_tokens), 0).label("output_tokens"),
            func.coalesce(func.sum(Run.credits_micro), 0).label("credits_micro"),
            func.coalesce(func.sum(Run.requests), 0).label("requests"),
            func.coalesce(func.sum(Run.waits), 0).label("waits"),
        )
        .where(
            Run.schedule_id == schedule_id,
            from_states(Run.status, _FINISHED),
            Run.finished_at >= start,
            Run.finished_at < end,
        )
        .group_by(day, Run.status)
    )
    return list(rows.all())


# --- the firing loop (synchronous steps of a write transaction) ---------------------------------
async def due_ids(db: Database, *, now: datetime, limit: int) -> list[str]:
    """Schedules whose next fire time has come, the most overdue first (a read)."""
    async with db.session(write=False) as session:
        found = await session.scalars(
            select(Schedule.id)
            .where(Schedule.next_fire_at <= now, Schedule.paused.is_(False))
            .order_by(Schedule.next_fire_at)
            .limit(limit)
        )
        return list(found.all())


def lock(
    session: Session,
    *,
    schedule_id: str,
    due_by: datetime | None,
    account_id: int | None,
    skip_locked: bool,
) -> Schedule | None:
    """The schedule, its row locked until the transaction ends (PostgreSQL; SQLite's writers
    are one at a time already). `due_by`: only while unpaused and due by then, skipping a row
    another process holds (it is firing it)."""
    query = select(Schedule).where(Schedule.id == schedule_id)
    if account_id is not None:
        query = query.where(Schedule.account_id == account_id)
    if due_by is not None:
        query = query.where(Schedule.next_fire_at <= due_by, Schedule.paused.is_(False))
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=skip_locked)
    return session.scalar(query)


def live_agent(
    session: Session, *, account_id: int, agent_id: str
) -> tuple[dict[str, Any], int] | None:
    """The config of the account's agent and the number of the version it is (one row, so
    the two agree), unless deleted."""
    row = session.execute(
        select(Agent.config, Agent.version).where(
            Agent.id == agent_id, Agent.account_id == account_id, Agent.deleted_at.is_(None)
        )
    ).first()
    return None if row is None else (dict(row.config), int(row.version))


def thread_exists(session: Session, *, account_id: int, thread_id: str) -> bool:
    found = session.scalar(
        select(Thread.id).where(Thread.id == thread_id, Thread.account_id == account_id)
    )
    return found is not None


def unfinished_runs(session: Session, *, schedule_id: str) -> list[UnfinishedRun]:
    """The schedule's queued, running and waiting runs, oldest first."""
    rows = session.execute(
        select(
            Run.id.label("run_id"),
            Run.account_id,
            Run.agent_id,
            Run.webhook_url,
            Run.waits,
            Run.input_tokens,
            Run.output_tokens,
            Run.requests,
            Run.tool_calls,
            Run.credits_micro,
        )
        .where(Run.schedule_id == schedule_id, from_states(Run.status, UNFINISHED))
        .order_by(Run.created_at, Run.id)
    )
    return [UnfinishedRun(**row._asdict()) for row in rows.all()]


def credits_used(session: Session, *, schedule_id: str, start: datetime, end: datetime) -> int:
    """Micro-credits used by the runs of the schedule's firings with a fire time in
    [start, end): what its runs have used so far, finished or not."""
    found = session.scalar(
        select(func.coalesce(func.sum(Run.credits_micro), 0))
        .select_from(_FIRINGS.join(Run, Run.id == _FIRINGS.c.run_id))
        .where(
            _FIRINGS.c.schedule_id == schedule_id,
            _FIRINGS.c.fire_at >= start,
            _FIRINGS.c.fire_at < end,
        )
    )
    return int(found or 0)


def latest_fire_at(session: Session, *, schedule_id: str, since: datetime) -> datetime | None:
    """The latest fire time recorded at or after `since`, if any."""
    found: datetime | None = session.scalar(
        select(func.max(_FIRINGS.c.fire_at)).where(
            _FIRINGS.c.schedule_id == schedule_id, _FIRINGS.c.fire_at >= since
        )
    )
    return found


def insert_firing(session: Session, values: dict[str, Any]) -> bool:
    """Record a firing unless its (schedule, fire time) is recorded already; whether it was."""
    dialect = session.get_bind().dialect.name
    make = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = (
        make(_FIRINGS)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["schedule_id", "fire_at"])
    )
    result = session.execute(statement)
    return bool(cast(Any, result).rowcount)


def set_firing_run(session: Session, *, firing_id: str, run_id: str) -> None:
    session.execute(update(_FIRINGS).where(_FIRINGS.c.id == firing_id).values(run_id=run_id))


def move_on(session: Session, *, schedule_id: str, next_fire_at: datetime | None) -> None:
    session.execute(
        update(Schedule)
        .where(Schedule.id == schedule_id)
        # Moving on is not an edit: `updated_at` keeps the time of the last change asked for.
        .values(next_fire_at=next_fire_at, updated_at=Schedule.updated_at)
    )
