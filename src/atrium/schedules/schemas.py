"""Request and response bodies of `/v1/schedules`."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from atrium.analytics.schemas import DailyUsage, UsageCounters
from atrium.analytics.service import MICRO
from atrium.db.models import Schedule, ScheduleFiring
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import ALWAYS_SENT, NOT_BLANK_WITHOUT_NUL, never_null, refuse_null
from atrium.runs.api.schemas import RunConfig

OnOverlap = Literal["skip", "enqueue", "cancel_previous"]
OnMissed = Literal["skip", "run_once", "run_all"]
FiringStatus = Literal["fired", "skipped"]
# Why a fire time did not run.
SkipReason = Literal[
    "missed", "catch_up_limit", "overlap", "credit_cap", "thread_missing", "agent_missing"
]
Trigger = Literal["cron", "manual"]
NEW_THREAD: Final = "new"
MAX_CREDITS_PER_DAY: Final = 1_000_000_000.0

_CRON = Field(
    description="Five fields: minute hour day-of-month month day-of-week (`0 9 * * MON-FRI`), "
    "as Debian's cron reads them, in `timezone`.",
    max_length=200,
)
_TIMEZONE = Field(description="An IANA zone (`Europe/Berlin`); fire times follow its DST.")
_THREAD = Field(
    description='`"new"`: each firing starts a new thread; a thread id: every firing continues '
    "that thread (one run of a thread at a time).",
    max_length=40,
)
_OVERLAP = Field(
    description="When the schedule's previous run is still unfinished at a fire time: `skip` "
    "the firing (recorded, reason `overlap`); `enqueue` a run anyway (on one thread it waits "
    "for the previous one; with thread `new` the runs may run side by side); "
    "`cancel_previous`: cancel the unfinished runs (cancel_reason `superseded`), then run."
)
_MISSED = Field(
    description="Fire times that passed while no process was firing (later than "
    "ATRIUM_SCHEDULE_MISFIRE_GRACE_SECONDS): `skip` them all; `run_once`: one run for the latest, "
    "the others skipped; `run_all`: a run for each of the latest ATRIUM_SCHEDULE_CATCH_UP_LIMIT, "
    "earlier ones skipped (reason `catch_up_limit`)."
)
_CAP = Field(
    description="Credits the schedule's runs may use per day (days of `timezone`, by fire "
    "time); once reached, fire times skip (reason `credit_cap`) until the next day.",
    gt=0,
    le=MAX_CREDITS_PER_DAY,
)


class _Body(BaseModel):
    # Unknown keys are errors (a typo must not be silently ignored).
    model_config = ConfigDict(extra="forbid")


class ScheduleCreate(_Body):
    """A new schedule: `prompt` run by `agent_id` (default: the account's default agent) at
    each fire time of `cron` in `timezone`."""

    prompt: str = Field(
        description="The task text of every run; not blank, no NUL, at most "
        "ATRIUM_RUN_MAX_PROMPT_CHARS characters.",
        json_schema_extra={"pattern": NOT_BLANK_WITHOUT_NUL},
    )
    cron: str = _CRON
    timezone: str = Field("UTC", description=_TIMEZONE.description)
    agent_id: str | None = Field(
        None,
        description="The agent (`agt_…`, its live version when each run is queued), a version "
        "of it (`agt_…@3` or `agt_…@v3`) or an alias (`agt_…@prod`, followed as it moves); "
        "default: the account's default agent.",
    )
    thread: str = Field(NEW_THREAD, description=_THREAD.description, max_length=40)
    metadata: dict[str, Any] | None = Field(None, description="Kept with every run it queues.")
    config: RunConfig | None = Field(None, description="Per-run config on top of the agent's.")
    starts_at: AwareDatetime | None = Field(None, description="The earliest a fire time may be.")
    ends_at: AwareDatetime | None = Field(None, description="The latest a fire time may be.")
    paused: bool = False
    on_overlap: OnOverlap = Field("skip", description=_OVERLAP.description)
    on_missed: OnMissed = Field("run_once", description=_MISSED.description)
    max_credits_per_day: float | None = Field(
        None, description=_CAP.description, gt=0, le=MAX_CREDITS_PER_DAY
    )


# PUT: present fields replace; these may be null (cleared), the others may not.
NULLABLE: Final = frozenset({"config", "starts_at", "ends_at", "max_credits_per_day", "metadata"})
_NEVER_NULL: Final = (
    "prompt",
    "cron",
    "timezone",
    "agent_id",
    "thread",
    "paused",
    "on_overlap",
    "on_missed",
)


class ScheduleUpdate(_Body):
    """PUT: the fields present replace the schedule's (`null` clears `config`, `starts_at`,
    `ends_at`, `max_credits_per_day`, `metadata`). A new `cron`, `timezone`, `starts_at` or
    `ends_at` fires from now on by the new rule."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=never_null(*_NEVER_NULL))

    prompt: str | None = Field(None, json_schema_extra={"pattern": NOT_BLANK_WITHOUT_NUL})
    cron: str | None = Field(None, max_length=200)
    timezone: str | None = None
    agent_id: str | None = None
    thread: str | None = Field(None, max_length=40)
    metadata: dict[str, Any] | None = None
    config: RunConfig | None = None
    starts_at: AwareDatetime | None = None
    ends_at: AwareDatetime | None = None
    paused: bool | None = None
    on_overlap: OnOverlap | None = None
    on_missed: OnMissed | None = None
    max_credits_per_day: float | None = Field(None, gt=0, le=MAX_CREDITS_PER_DAY)

    _not_null = field_validator(*_NEVER_NULL, mode="before")(refuse_null)

    def given(self) -> set[str]:
        return set(self.model_fields_set)


class ScheduleOut(BaseModel):
    """A schedule, with the next time it fires (null while paused or when none is left)."""

    model_config = ALWAYS_SENT

    schedule_id: str
    agent_id: str = Field(description="As given: `agt_…`, `agt_…@3` or `agt_…@prod`.")
    prompt: str
    cron: str
    timezone: str
    thread: str = Field(description='`"new"` or the thread id every firing continues.')
    metadata: dict[str, Any]
    config: dict[str, Any] | None
    starts_at: str | None
    ends_at: str | None
    paused: bool
    on_overlap: OnOverlap
    on_missed: OnMissed
    max_credits_per_day: float | None
    next_fire_at: str | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, schedule: Schedule) -> ScheduleOut:
        cap = schedule.max_credits_per_day_micro
        return cls(
            schedule_id=schedule.id,
            agent_id=(
                schedule.agent_id
                if schedule.agent_ref is None
                else f"{schedule.agent_id}@{schedule.agent_ref}"
            ),
            prompt=schedule.prompt,
            cron=schedule.cron,
            timezone=schedule.timezone,
            thread=schedule.thread_id or NEW_THREAD,
            metadata=schedule.schedule_metadata,
            config=schedule.config,
            starts_at=isoformat(schedule.starts_at) if schedule.starts_at else None,
            ends_at=isoformat(schedule.ends_at) if schedule.ends_at else None,
            paused=schedule.paused,
            on_overlap=schedule.on_overlap,
            on_missed=schedule.on_missed,
            max_credits_per_day=None if cap is None else cap / MICRO,
            next_fire_at=(
                isoformat(schedule.next_fire_at)
                if schedule.next_fire_at and not schedule.paused
                else None
            ),
            created_at=isoformat(schedule.created_at),
            updated_at=isoformat(schedule.updated_at),
        )


class ScheduleList(BaseModel):
    """A page of schedules, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[ScheduleOut]
    has_more: bool
    next_cursor: str | None


class ScheduleDeleted(BaseModel):
    model_config = ALWAYS_SENT

    schedule_id: str
    deleted: bool = True


class NextFiring(BaseModel):
    fire_at: str = Field(description="UTC.")
    local_time: str = Field(description="The same instant in the schedule's zone, with offset.")


class NextFirings(BaseModel):
    """The schedule's next fire times by its rule (whether paused or not)."""

    schedule_id: str
    timezone: str
    data: list[NextFiring]


class FiringOut(BaseModel):
    """One fire time: `fired` with the run it queued, or `skipped` with the reason."""

    model_config = ALWAYS_SENT

    firing_id: str
    schedule_id: str
    fire_at: str
    trigger: Trigger = Field(description="`cron` (a fire time) or `manual` (`POST …/trigger`).")
    status: FiringStatus
    reason: SkipReason | None = Field(description="Why a skipped firing did not run.")
    detail: str | None
    run_id: str | None = Field(description="The run a fired firing queued.")
    created_at: str

    @classmethod
    def of(cls, firing: ScheduleFiring) -> FiringOut:
        return cls(
            firing_id=firing.id,
            schedule_id=firing.schedule_id,
            fire_at=isoformat(firing.fire_at),
            trigger=firing.trigger,
            status=firing.status,
            reason=firing.reason,
            detail=firing.detail,
            run_id=firing.run_id,
            created_at=isoformat(firing.created_at),
        )


class FiringList(BaseModel):
    """A page of firings, latest fire time first; pass `next_cursor` as `cursor`."""

    data: list[FiringOut]
    has_more: bool
    next_cursor: str | None


class ScheduleUsage(BaseModel):
    """What the schedule's finished runs used, by UTC day of their end (zeros included)."""

    schedule_id: str
    start_date: str
    end_date: str
    totals: UsageCounters
    daily: list[DailyUsage]
