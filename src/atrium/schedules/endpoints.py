"""`/v1/schedules`: runs that fire on a cron expression in a time zone, once per fire time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from atrium.agents.model_check import ModelCheckDep
from atrium.agents.versions.errors import AgentReferenceUnknown
from atrium.analytics.errors import UsageRangeInvalid
from atrium.http.deps import CurrentPrincipal, DatabaseDep, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.kit.time import isoformat
from atrium.runs.api.endpoints import BrokerDep
from atrium.schedules import cron, scheduler, service
from atrium.schedules.errors import (
    ScheduleAgentNotFound,
    ScheduleLimitReached,
    ScheduleNotFound,
    ScheduleThreadNotFound,
    ScheduleWindowInvalid,
)
from atrium.schedules.schemas import (
    FiringList,
    FiringOut,
    FiringStatus,
    NextFiring,
    NextFirings,
    ScheduleCreate,
    ScheduleDeleted,
    ScheduleList,
    ScheduleOut,
    ScheduleUpdate,
    ScheduleUsage,
)

# A body sent without Content-Type is read as JSON (what this group takes); the gateway already
# answers 415 for any other declared type.
router = APIRouter(prefix="/schedules", tags=["schedules"], strict_content_type=False)
_NOT_FOUND = error_responses(ScheduleNotFound)
_CHECKS = (
    ScheduleAgentNotFound,
    AgentReferenceUnknown,
    ScheduleThreadNotFound,
    ScheduleWindowInvalid,
)
ScheduleId = Annotated[str, Path(description="The schedule's id (`sch_…`).", max_length=40)]


@router.get("")
async def list_schedules(
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> ScheduleList:
    """The account's schedules, newest first, each with its next fire time; follow
    `next_cursor` (as `cursor`) while `has_more`."""
    found, next_cursor = await service.list_schedules(
        session, account_id=principal.account_id, limit=limit, cursor=cursor
    )
    return ScheduleList(
        data=[ScheduleOut.of(schedule) for schedule in found],
        has_more=next_cursor is not None,
        next_cursor=next_cursor,
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(*_CHECKS, ScheduleLimitReached),
)
async def create_schedule(
    body: ScheduleCreate,
    session: SessionDep,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    models: ModelCheckDep,
) -> ScheduleOut:
    """A schedule: at each fire time of `cron` in `timezone`, a run of `prompt` (an ordinary
    run, with `schedule_id`). An invalid expression or zone is a 400 naming it."""
    schedule = await service.create_schedule(
        session,
        db=db,
        settings=settings,
        models=models,
        account_id=principal.account_id,
        data=body,
    )
    return ScheduleOut.of(schedule)


@router.get("/{schedule_id}", responses=_NOT_FOUND)
async def get_schedule(
    schedule_id: ScheduleId, session: SessionDep, principal: CurrentPrincipal
) -> ScheduleOut:
    """One schedule of the account (404 when unknown or another account's)."""
    schedule = await service.get_schedule(
        session, account_id=principal.account_id, schedule_id=schedule_id
    )
    return ScheduleOut.of(schedule)


@router.put("/{schedule_id}", responses=error_responses(ScheduleNotFound, *_CHECKS))
async def update_schedule(
    schedule_id: ScheduleId,
    body: ScheduleUpdate,
    session: SessionDep,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    models: ModelCheckDep,
) -> ScheduleOut:
    """Replace the fields present in the body; the next fire time follows the new rule from
    now on."""
    schedule = await service.update_schedule(
        session,
        db=db,
        settings=settings,
        models=models,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        data=body,
    )
    return ScheduleOut.of(schedule)


@router.delete("/{schedule_id}", responses=_NOT_FOUND)
async def delete_schedule(
    schedule_id: ScheduleId, session: SessionDep, principal: CurrentPrincipal
) -> ScheduleDeleted:
    """Delete the schedule and its firings; the runs it queued stay."""
    deleted = await service.delete_schedule(
        session, account_id=principal.account_id, schedule_id=schedule_id
    )
    return ScheduleDeleted(schedule_id=deleted.id)


@router.post("/{schedule_id}/pause", responses=_NOT_FOUND)
async def pause_schedule(
    schedule_id: ScheduleId, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ScheduleOut:
    """Stop firing until resumed."""
    schedule = await service.set_paused(
        session,
        settings=settings,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        paused=True,
    )
    return ScheduleOut.of(schedule)


@router.post("/{schedule_id}/resume", responses=_NOT_FOUND)
async def resume_schedule(
    schedule_id: ScheduleId, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ScheduleOut:
    """Fire again from the next fire time on (the ones passed while paused are not run)."""
    schedule = await service.set_paused(
        session,
        settings=settings,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        paused=False,
    )
    return ScheduleOut.of(schedule)


@router.get("/{schedule_id}/next", responses=_NOT_FOUND)
async def next_firings(
    schedule_id: ScheduleId,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    n: Annotated[int, Query(ge=1, le=service.MAX_NEXT, description="How many.")] = 5,
) -> NextFirings:
    """The next `n` fire times by the schedule's rule (a preview: also while paused)."""
    schedule, times = await service.next_fire_times(
        session,
        settings=settings,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        n=n,
    )
    tz = cron.zone(schedule.timezone)
    return NextFirings(
        schedule_id=schedule.id,
        timezone=schedule.timezone,
        data=[
            NextFiring(fire_at=isoformat(time), local_time=time.astimezone(tz).isoformat())
            for time in times
        ],
    )


@router.post("/{schedule_id}/trigger", status_code=status.HTTP_201_CREATED, responses=_NOT_FOUND)
async def trigger_schedule(
    schedule_id: ScheduleId,
    db: DatabaseDep,
    broker: BrokerDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> FiringOut:
    """Fire now (paused or not), by the schedule's overlap and credit rules: the firing, with
    its run or why it was skipped."""
    fired = await scheduler.trigger(
        db, broker, settings=settings, account_id=principal.account_id, schedule_id=schedule_id
    )
    return FiringOut.of(fired)


@router.get("/{schedule_id}/firings", responses=_NOT_FOUND)
async def list_firings(
    schedule_id: ScheduleId,
    session: SessionDep,
    principal: CurrentPrincipal,
    status: Annotated[FiringStatus | None, Query(description="Only fired or skipped.")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> FiringList:
    """Every fire time handled, latest first: fired (with the run) or skipped (with the
    reason: missed, catch_up_limit, overlap, credit_cap, thread_missing, agent_missing)."""
    found, next_cursor = await service.list_firings(
        session,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        status=status,
        limit=limit,
        cursor=cursor,
    )
    return FiringList(
        data=[FiringOut.of(each) for each in found],
        has_more=next_cursor is not None,
        next_cursor=next_cursor,
    )


@router.get("/{schedule_id}/usage", responses=error_responses(ScheduleNotFound, UsageRangeInvalid))
async def schedule_usage(
    schedule_id: ScheduleId,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    start_date: Annotated[
        str | None,
        Query(
            description="First UTC day, YYYY-MM-DD. Default: end_date - 29 days.",
            json_schema_extra={"format": "date"},
        ),
    ] = None,
    end_date: Annotated[
        str | None,
        Query(
            description="Last UTC day, YYYY-MM-DD. Default: today.",
            json_schema_extra={"format": "date"},
        ),
    ] = None,
) -> ScheduleUsage:
    """Usage of the schedule's finished runs: totals and every day of the range (zeros
    included), the counters of `GET /analytics/usage`. At most 366 days."""
    found, start, end, totals, daily = await service.usage(
        session,
        settings=settings,
        account_id=principal.account_id,
        schedule_id=schedule_id,
        start_date=start_date,
        end_date=end_date,
    )
    return ScheduleUsage(
        schedule_id=found,
        start_date=start.isoformat(),
        end_date=end.isoformat(),
        totals=totals,
        daily=daily,
    )
