"""Rules of schedules: checked rules and references, the next fire time kept, pages, usage."""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Sequence
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents import repository as agents_repository
from atrium.agents.config import AgentConfig, stored_config
from atrium.agents.model_check import ModelCheck
from atrium.agents.service import get_or_create_default_agent
from atrium.agents.versions import repository as versions_repository
from atrium.agents.versions.errors import AgentReferenceUnknown
from atrium.agents.versions.resolve import MALFORMED, read_ref, split_reference
from atrium.analytics.errors import UsageRangeInvalid
from atrium.analytics.schemas import DailyUsage, UsageCounters
from atrium.analytics.service import MICRO, parse_day
from atrium.db.engine import Database
from atrium.db.models import Schedule, ScheduleFiring
from atrium.errors import InvalidParameter
from atrium.kit.cursor import decode_cursor, encode_cursor, split_page
from atrium.kit.ids import new_id
from atrium.kit.time import as_utc
from atrium.providers import repository as providers_repository
from atrium.runs.api.schemas import RunConfig
from atrium.runs.api.service import checked_metadata, checked_prompt
from atrium.schedules import clock, cron, repository
from atrium.schedules.errors import (
    ScheduleAgentNotFound,
    ScheduleLimitReached,
    ScheduleNotFound,
    ScheduleThreadNotFound,
    ScheduleWindowInvalid,
)
from atrium.schedules.schemas import NEW_THREAD, NULLABLE, ScheduleCreate, ScheduleUpdate
from atrium.settings import Settings

MAX_NEXT: Final = 50
_ID: Final = re.compile(r"^[a-z]{1,8}_[A-Za-z0-9]{1,36}$")
MAX_USAGE_DAYS: Final = 366


def _window(starts_at: dt.datetime | None, ends_at: dt.datetime | None) -> cron.Window:
    starts = as_utc(starts_at) if starts_at else None
    ends = as_utc(ends_at) if ends_at else None
    if starts is not None and ends is not None and ends <= starts:
        raise ScheduleWindowInvalid()
    return cron.Window(starts, ends)


def _next_fire_at(schedule: Schedule, now: dt.datetime) -> dt.datetime | None:
    """The first fire time after `now` by the schedule's rule (None while paused)."""
    if schedule.paused:
        return None
    window = _window(schedule.starts_at, schedule.ends_at)
    after = now + dt.timedelta(microseconds=1)
    return cron.first_at_or_after(schedule.cron, cron.zone(schedule.timezone), after, window)


async def _thread(session: AsyncSession, *, account_id: int, thread: str) -> str | None:
    if thread == NEW_THREAD:
        return None
    # What `new_id` makes, else nobody's (a NUL must never reach PostgreSQL).
    if not _ID.match(thread) or not await repository.thread_of_account(
        session, account_id=account_id, thread_id=thread
    ):
        raise ScheduleThreadNotFound(thread)
    return thread


async def _agent(
    session: AsyncSession, *, settings: Settings, account_id: int, agent_id: str | None
) -> tuple[str, str | None]:
    """The agent the schedule's runs use and the version or alias after `@` (None: its live
    version). The version or alias must exist now; an alias deleted later skips the firings."""
    if agent_id is None:
        agent = await get_or_create_default_agent(
            session, account_id=account_id, model=settings.default_model
        )
        return agent.id, None
    plain, ref = split_reference(agent_id)
    found = (
        await agents_repository.get_live(session, account_id=account_id, agent_id=plain)
        if _ID.match(plain)
        else None
    )
    if found is None:
        raise ScheduleAgentNotFound(agent_id)
    if ref is not None:
        await _check_reference(session, agent_id=found.id, reference=agent_id, ref=ref)
    return found.id, ref


async def _check_reference(
    session: AsyncSession, *, agent_id: str, reference: str, ref: str
) -> None:
    named = read_ref(ref)
    if named is None:
        raise AgentReferenceUnknown(reference, MALFORMED)
    if isinstance(named, int):
        if await versions_repository.get(session, agent_id=agent_id, number=named) is None:
            raise AgentReferenceUnknown(reference, f"the agent has no version {named}")
    elif await versions_repository.alias(session, agent_id=agent_id, name=named) is None:
        raise AgentReferenceUnknown(reference, f"the agent has no alias {ref!r}")


async def _config(
    db: Database, models: ModelCheck, *, account_id: int, config: RunConfig | None
) -> AgentConfig | None:
    if config is None:
        return None
    given = config.given()
    if config.model is not None:
        await models.require(
            config.model,
            account_providers=functools.partial(
                providers_repository.names_of_account, db, account_id=account_id
            ),
        )
    return stored_config(given) if given else None


def _cap(value: float | None) -> int | None:
    return None if value is None else round(value * MICRO)


async def create_schedule(
    session: AsyncSession,
    *,
    db: Database,
    settings: Settings,
    models: ModelCheck,
    account_id: int,
    data: ScheduleCreate,
) -> Schedule:
    prompt = checked_prompt(settings, data.prompt)
    expression = cron.check(data.cron)
    cron.zone(data.timezone)
    _window(data.starts_at, data.ends_at)
    metadata = checked_metadata(settings, data.metadata)
    config = await _config(db, models, account_id=account_id, config=data.config)
    if await repository.count(session, account_id=account_id) >= settings.schedule_max_per_account:
        raise ScheduleLimitReached(settings.schedule_max_per_account)
    thread_id = await _thread(session, account_id=account_id, thread=data.thread)
    agent_id, agent_ref = await _agent(
        session, settings=settings, account_id=account_id, agent_id=data.agent_id
    )
    now = clock.now(settings)
    schedule = Schedule(
        id=new_id("sch"),
        account_id=account_id,
        agent_id=agent_id,
        agent_ref=agent_ref,
        prompt=prompt,
        cron=expression,
        timezone=data.timezone,
        thread_id=thread_id,
        schedule_metadata=metadata,
        config=config,
        starts_at=data.starts_at,
        ends_at=data.ends_at,
        paused=data.paused,
        on_overlap=data.on_overlap,
        on_missed=data.on_missed,
        max_credits_per_day_micro=_cap(data.max_credits_per_day),
        created_at=now,
        updated_at=now,
    )
    schedule.next_fire_at = _next_fire_at(schedule, now)
    session.add(schedule)
    await session.flush()
    return schedule


async def get_schedule(session: AsyncSession, *, account_id: int, schedule_id: str) -> Schedule:
    found = await repository.get(session, account_id=account_id, schedule_id=schedule_id)
    if found is None:
        raise ScheduleNotFound(schedule_id)
    return found


async def list_schedules(
    session: AsyncSession, *, account_id: int, limit: int, cursor: str | None
) -> tuple[Sequence[Schedule], str | None]:
    before = decode_cursor(cursor) if cursor else None
    rows = await repository.page(session, account_id=account_id, before=before, limit=limit + 1)
    return split_page(rows, limit)


async def update_schedule(
    session: AsyncSession,
    *,
    db: Database,
    settings: Settings,
    models: ModelCheck,
    account_id: int,
    schedule_id: str,
    data: ScheduleUpdate,
) -> Schedule:
    """The fields given replace the schedule's; its next fire time is worked out again from
    now (a change of rule never fires the times it passed over)."""
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    given = data.given()
    values: dict[str, Any] = {}
    if data.prompt is not None:
        values["prompt"] = checked_prompt(settings, data.prompt)
    if data.cron is not None:
        values["cron"] = cron.check(data.cron)
    if data.timezone is not None:
        cron.zone(data.timezone)
        values["timezone"] = data.timezone
    for name in ("starts_at", "ends_at"):
        if name in given:
            values[name] = getattr(data, name)
    _window(values.get("starts_at", schedule.starts_at), values.get("ends_at", schedule.ends_at))
    if "metadata" in given:
        values["schedule_metadata"] = checked_metadata(settings, data.metadata)
    if "config" in given:
        values["config"] = await _config(db, models, account_id=account_id, config=data.config)
    if "max_credits_per_day" in given:
        values["max_credits_per_day_micro"] = _cap(data.max_credits_per_day)
    if data.thread is not None:
        values["thread_id"] = await _thread(session, account_id=account_id, thread=data.thread)
    if data.agent_id is not None:
        values["agent_id"], values["agent_ref"] = await _agent(
            session, settings=settings, account_id=account_id, agent_id=data.agent_id
        )
    for name in ("paused", "on_overlap", "on_missed"):
        if getattr(data, name) is not None:
            values[name] = getattr(data, name)
    unknown = given - NULLABLE - set(ScheduleUpdate.model_fields)
    if unknown:  # pragma: no cover - extra="forbid" refuses them first
        raise InvalidParameter(sorted(unknown)[0], "unknown field")
    for name, value in values.items():
        setattr(schedule, name, value)
    now = clock.now(settings)
    schedule.next_fire_at = _next_fire_at(schedule, now)
    schedule.updated_at = now
    await session.flush()
    return schedule


async def set_paused(
    session: AsyncSession, *, settings: Settings, account_id: int, schedule_id: str, paused: bool
) -> Schedule:
    """Pause, or resume from now on: the fire times a pause passed over are not missed ones."""
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    now = clock.now(settings)
    if schedule.paused != paused:
        schedule.paused = paused
        schedule.updated_at = now
    schedule.next_fire_at = _next_fire_at(schedule, now)
    await session.flush()
    return schedule


async def delete_schedule(session: AsyncSession, *, account_id: int, schedule_id: str) -> Schedule:
    """Delete the schedule and its firings; its runs stay (with their `schedule_id`)."""
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    await session.delete(schedule)
    await session.flush()
    return schedule


async def next_fire_times(
    session: AsyncSession, *, settings: Settings, account_id: int, schedule_id: str, n: int
) -> tuple[Schedule, list[dt.datetime]]:
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    window = _window(schedule.starts_at, schedule.ends_at)
    tz = cron.zone(schedule.timezone)
    return schedule, cron.upcoming(schedule.cron, tz, clock.now(settings), window, n)


async def list_firings(
    session: AsyncSession,
    *,
    account_id: int,
    schedule_id: str,
    status: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[Sequence[ScheduleFiring], str | None]:
    """A page of the schedule's firings, latest fire time first."""
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    before = decode_cursor(cursor) if cursor else None
    rows = await repository.firings(
        session, schedule_id=schedule.id, status=status, before=before, limit=limit + 1
    )
    found = rows[:limit]
    if len(rows) <= limit:
        return found, None
    return found, encode_cursor(found[-1].fire_at, found[-1].id)


_COUNTERS: Final = ("input_tokens", "output_tokens", "requests")


async def usage(
    session: AsyncSession,
    *,
    settings: Settings,
    account_id: int,
    schedule_id: str,
    start_date: str | None,
    end_date: str | None,
) -> tuple[str, dt.date, dt.date, UsageCounters, list[DailyUsage]]:
    """What the schedule's finished runs used per UTC day (the analytics' counters)."""
    schedule = await get_schedule(session, account_id=account_id, schedule_id=schedule_id)
    end = parse_day("end_date", end_date) or clock.now(settings).date()
    start = parse_day("start_date", start_date) or end - dt.timedelta(days=29)
    if start > end:
        raise UsageRangeInvalid("start_date must be on or before end_date")
    if (end - start).days >= MAX_USAGE_DAYS:
        raise UsageRangeInvalid(f"the range is at most {MAX_USAGE_DAYS} days")
    rows = await repository.usage_by_day(
        session,
        schedule_id=schedule.id,
        start=dt.datetime.combine(start, dt.time(), dt.UTC),
        end=dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), dt.UTC),
    )
    days: dict[str, dict[str, Any]] = {}
    for offset in range((end - start).days + 1):
        day = (start + dt.timedelta(days=offset)).isoformat()
        days[day] = dict.fromkeys(
            ("runs", "completed", "failed", "cancelled", *_COUNTERS, "requires_action"), 0
        ) | {"credits_micro": 0}
    for row in rows:
        counters = days.get(str(row.day)[:10])
        if counters is None:
            continue
        counters["runs"] += row.runs
        counters[row.status] += row.runs
        for name in _COUNTERS:
            counters[name] += int(row._mapping[name])
        counters["credits_micro"] += int(row.credits_micro)
        counters["requires_action"] += int(row.waits)
    daily = [DailyUsage(date=day, **_shown(counters)) for day, counters in days.items()]
    totals: dict[str, Any] = {}
    for counters in days.values():
        for name, value in counters.items():
            totals[name] = totals.get(name, 0) + value
    return schedule.id, start, end, UsageCounters(**_shown(totals)), daily


def _shown(counters: dict[str, Any]) -> dict[str, Any]:
    shown = {name: value for name, value in counters.items() if name != "credits_micro"}
    shown["credits"] = counters["credits_micro"] / MICRO
    return shown
