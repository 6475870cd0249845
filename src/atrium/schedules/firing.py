"""A schedule's fire times decided and written: one synchronous write transaction per schedule.

The transaction holds the schedule's row (PostgreSQL: `FOR UPDATE`; the loop's skips a row
another process holds), records each fire time in `schedule_firings` under its unique
(schedule, fire time) key, inserts the run of a fired one (`moves.create`) and the webhook
deliveries, and moves `next_fire_at` past now. All or nothing: a process killed midway leaves
nothing, and the next process to hold the row does the same fire times; a fire time already
recorded is never recorded again, so it never queues a second run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from atrium.agents.config import AgentConfig, stored_config
from atrium.agents.versions import repository as versions_repository
from atrium.agents.versions.resolve import read_ref, version_named
from atrium.analytics.service import MICRO
from atrium.db.models import CancelReason, Schedule, ScheduleFiring
from atrium.kit.ids import new_id
from atrium.kit.time import as_utc
from atrium.runs.lifecycle import busy_threads, moves
from atrium.runs.lifecycle.moves import Announcement
from atrium.runs.repository import NewRun, NewThread
from atrium.schedules import cron, repository
from atrium.schedules.schemas import FiringOut
from atrium.webhooks import outbox

# Missed fire times listed one by one at most (the earlier ones are summed up in one record).
MAX_LISTED: Final = 100


@dataclass(frozen=True, slots=True)
class Rules:
    """The deployment's side of firing (settings)."""

    grace: timedelta
    catch_up_limit: int


@dataclass(slots=True)
class Outcome:
    """What a transaction wrote: its firings, and what to announce once it committed."""

    firings: list[ScheduleFiring] = field(default_factory=list)
    announcements: list[Announcement] = field(default_factory=list)
    deliveries: int = 0


@dataclass(frozen=True, slots=True)
class _RunAgent:
    """What a fired run executes: the config of the agent's live version, or of the version
    or alias the schedule names (the schedule's `config` on top), and that version's number,
    read together when it fires."""

    config: AgentConfig
    version: int


@dataclass(frozen=True, slots=True)
class _Plan:
    fire_at: datetime
    skip: str | None = None
    detail: str | None = None


def _window(schedule: Schedule) -> cron.Window:
    return cron.Window(
        as_utc(schedule.starts_at) if schedule.starts_at else None,
        as_utc(schedule.ends_at) if schedule.ends_at else None,
    )


def fire_due(session: Session, *, schedule_id: str, now: datetime, rules: Rules) -> Outcome | None:
    """The schedule's fire times up to `now`, by its `on_missed`; None when it is not due (or
    another process holds it)."""
    schedule = repository.lock(
        session, schedule_id=schedule_id, due_by=now, account_id=None, skip_locked=True
    )
    if schedule is None or schedule.next_fire_at is None:
        return None
    tz = cron.zone(schedule.timezone)
    keep = max(MAX_LISTED, rules.catch_up_limit)
    due = cron.due(
        schedule.cron, tz, as_utc(schedule.next_fire_at), now, _window(schedule), keep=keep
    )
    outcome = Outcome()
    for plan in _plans(schedule, due, now=now, rules=rules):
        _write(session, schedule, plan, tz=tz, trigger="cron", now=now, outcome=outcome)
    repository.move_on(session, schedule_id=schedule.id, next_fire_at=due.next_fire_at)
    return outcome


def fire_now(
    session: Session, *, schedule_id: str, account_id: int, now: datetime
) -> Outcome | None:
    """`POST …/trigger`: a firing at `now` by the schedule's rules (overlap, credit cap),
    paused or not; None when the account has no such schedule."""
    schedule = repository.lock(
        session, schedule_id=schedule_id, due_by=None, account_id=account_id, skip_locked=False
    )
    if schedule is None:
        return None
    outcome = Outcome()
    tz = cron.zone(schedule.timezone)
    # A fire time of its own: after any recorded at or after now (two triggers in one
    # microsecond, or a clock that stands still), so it is never taken for one of them.
    latest = repository.latest_fire_at(session, schedule_id=schedule.id, since=now)
    fire_at = now if latest is None else as_utc(latest) + timedelta(microseconds=1)
    _write(session, schedule, _Plan(fire_at), tz=tz, trigger="manual", now=now, outcome=outcome)
    return outcome


def _plans(schedule: Schedule, due: cron.Due, *, now: datetime, rules: Rules) -> list[_Plan]:
    """What each due fire time does, oldest first: on-time ones fire; missed ones (later than
    the grace) as `on_missed` says."""
    missed = [fire_at for fire_at in due.times if now - fire_at > rules.grace]
    on_time = due.times[len(missed) :]
    plans: list[_Plan] = []
    policy = schedule.on_missed
    if due.earlier and due.earliest is not None:
        first_listed = due.times[0]
        plans.append(
            _Plan(
                due.earliest,
                skip="catch_up_limit" if policy == "run_all" else "missed",
                detail=f"{due.earlier} or more fire times from this one until before "
                f"{first_listed.isoformat()} were missed and are not listed one by one",
            )
        )
    if policy == "run_all":
        limit = rules.catch_up_limit
        cut = max(0, len(missed) - limit)
        plans += [
            _Plan(t, "catch_up_limit", f"run_all runs the latest {limit} missed fire times")
            for t in missed[:cut]
        ]
        plans += [_Plan(t) for t in missed[cut:]]
    elif policy == "run_once" and missed:
        latest = missed[-1]
        plans += [
            _Plan(t, "missed", f"run_once ran the latest missed fire time, {latest.isoformat()}")
            for t in missed[:-1]
        ]
        plans.append(_Plan(latest))
    else:
        plans += [_Plan(t, "missed", "on_missed is skip") for t in missed]
    plans += [_Plan(t) for t in on_time]
    return plans


def _write(
    session: Session,
    schedule: Schedule,
    plan: _Plan,
    *,
    tz: ZoneInfo,
    trigger: str,
    now: datetime,
    outcome: Outcome,
) -> None:
    """Record one fire time (fired or skipped) and, when it fires, its run."""
    skip, detail = plan.skip, plan.detail
    agent: _RunAgent | None = None
    earlier: list[busy_threads.UnfinishedRun] = []
    # Made first: an alias's split is chosen by the run's id.
    run_id = new_id("run")
    if skip is None:
        skip, detail, agent, earlier = _checks(
            session, schedule, plan.fire_at, tz=tz, run_id=run_id
        )
    values: dict[str, Any] = {
        "id": new_id("fir"),
        "schedule_id": schedule.id,
        "account_id": schedule.account_id,
        "fire_at": plan.fire_at,
        "trigger": trigger,
        "status": "skipped" if skip else "fired",
        "reason": skip,
        "detail": detail,
        "run_id": None,
        "created_at": now,
    }
    if not repository.insert_firing(session, values):
        return  # recorded before: it fired (or skipped) then, once
    if skip is None and agent is not None:
        for previous in earlier:  # on_overlap cancel_previous
            stopped = busy_threads.stop_run(
                session, run=previous, reason=CancelReason.SUPERSEDED, now=now
            )
            if stopped is not None:
                outcome.announcements.append(stopped)
        run, thread = _new_run(schedule, agent, run_id=run_id, now=now)
        outcome.announcements.append(moves.create(session, thread=thread, run=run, now=now))
        repository.set_firing_run(session, firing_id=values["id"], run_id=run.id)
        values["run_id"] = run.id
    firing = ScheduleFiring(**values)
    outcome.firings.append(firing)
    event = "schedule.skipped" if skip else "schedule.fired"
    body = json.dumps({"event": event, **FiringOut.of(firing).model_dump()})
    outcome.deliveries += outbox.record_account_event(
        session,
        account_id=schedule.account_id,
        event=event,
        payload=body,
        run_id=values["run_id"],
        now=now,
    )


def _checks(
    session: Session, schedule: Schedule, fire_at: datetime, *, tz: ZoneInfo, run_id: str
) -> tuple[str | None, str | None, _RunAgent | None, list[busy_threads.UnfinishedRun]]:
    """Whether a fire time may run: (skip reason, detail, what the run executes, the unfinished
    runs to cancel first)."""
    if schedule.thread_id is not None and not repository.thread_exists(
        session, account_id=schedule.account_id, thread_id=schedule.thread_id
    ):
        return "thread_missing", f"thread {schedule.thread_id} no longer exists", None, []
    live = repository.live_agent(
        session, account_id=schedule.account_id, agent_id=schedule.agent_id
    )
    if live is None:
        return "agent_missing", f"agent {schedule.agent_id} no longer exists", None, []
    if schedule.agent_ref is not None:
        live = _named_version(
            session,
            account_id=schedule.account_id,
            agent_id=schedule.agent_id,
            ref=schedule.agent_ref,
            run_id=run_id,
        )
        if live is None:
            detail = f"agent {schedule.agent_id} no longer has {schedule.agent_ref!r}"
            return "agent_missing", detail, None, []
    cap = schedule.max_credits_per_day_micro
    if cap is not None:
        day = fire_at.astimezone(tz).date()
        # In UTC, as fire times are stored: SQLite compares datetimes as text, so a bound in
        # the zone's own offset would shift the day by that offset.
        start = datetime.combine(day, time(), tz).astimezone(UTC)
        end = datetime.combine(day + timedelta(days=1), time(), tz).astimezone(UTC)
        used = repository.credits_used(session, schedule_id=schedule.id, start=start, end=end)
        if used >= cap:
            detail = (
                f"its runs used {used / MICRO:g} of {cap / MICRO:g} credits on {day} "
                f"({schedule.timezone})"
            )
            return "credit_cap", detail, None, []
    earlier = repository.unfinished_runs(session, schedule_id=schedule.id)
    if earlier and schedule.on_overlap == "skip":
        ids = ", ".join(run.run_id for run in earlier[:3])
        return "overlap", f"its previous run is unfinished ({ids})", None, []
    agent_config, version = live
    agent = _RunAgent(stored_config({**agent_config, **(schedule.config or {})}), version)
    return None, None, agent, earlier if schedule.on_overlap == "cancel_previous" else []


def _named_version(
    session: Session, *, account_id: int, agent_id: str, ref: str, run_id: str
) -> tuple[dict[str, Any], int] | None:
    """The config and number of the agent version `ref` names (a number, or an alias, its
    split chosen by `run_id`), unless the alias or version is gone."""
    conn = session.connection()
    named = read_ref(ref)
    if named is None:
        return None
    number = version_named(
        conn, account_id=account_id, agent_id=agent_id, named=named, run_id=run_id
    )
    if number is None:
        return None
    config = versions_repository.version_config(
        conn, account_id=account_id, agent_id=agent_id, number=number
    )
    return None if config is None else (dict(config), number)


def _new_run(
    schedule: Schedule, agent: _RunAgent, *, run_id: str, now: datetime
) -> tuple[NewRun, NewThread | None]:
    config = agent.config
    thread = None
    thread_id = schedule.thread_id
    if thread_id is None:
        thread = NewThread(id=new_id("thr"), account_id=schedule.account_id, created_at=now)
        thread_id = thread.id
    run = NewRun(
        id=run_id,
        account_id=schedule.account_id,
        thread_id=thread_id,
        agent_id=schedule.agent_id,
        model=str(config.get("model", "atrium:offline")),
        agent_config=config,
        prompt=schedule.prompt,
        run_metadata=dict(schedule.schedule_metadata or {}),
        idempotency_key=None,
        request_hash=None,
        webhook_url=None,
        webhook_secret=None,
        created_at=now,
        schedule_id=schedule.id,
        agent_version=agent.version,
    )
    return run, thread
