"""The worker's side of runs that wait for their caller (docs/design.md#requires-action).

- `park`: a run whose model called a function tool, or an MCP tool that needs approval, gives
  back its lease and worker slot (`runs.lifecycle.wait`): its messages so far, the pending
  calls and its usage are written, conditional on the lease like a terminal write, with the
  `run.requires_action` event and its webhook deliveries.
- `resume_of`: once answered and claimed again (by any worker, after any restart), the run's
  state at its wait and the answers, for the executor to continue from.
- `expire_waits`: runs left unanswered past `run_action_timeout_seconds` fail with
  `ACTION_EXPIRED` (`runs.lifecycle.end_wait`; the recovery loop sweeps them).
"""

from __future__ import annotations

import functools
import logging
from datetime import timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import EventKind, Run, RunStatus
from atrium.kit.time import utcnow
from atrium.runs.api.presenters import run_out
from atrium.runs.events.broker import Broker
from atrium.runs.lifecycle import (
    Announcement,
    ClaimedRun,
    Ending,
    Usage,
    Waiting,
    waiting_runs,
    writes,
)
from atrium.runtime.billing import credits_micro
from atrium.runtime.deferred import Resume
from atrium.runtime.executor import RunOutcome
from atrium.settings import Settings
from atrium.worker.recorder import RunRecorder

log = logging.getLogger("atrium.worker")


async def resume_of(db: Database, claim: ClaimedRun) -> Resume | None:
    """The state to resume `claim` from, when it waited before (None: a fresh run)."""
    if claim.waits <= 0:
        return None
    async with db.session(write=False) as session:
        state = await waiting_runs.state_of(session, run_id=claim.run_id, wait=claim.waits)
    if state is None:
        raise RuntimeError(f"run {claim.run_id} waited, but its answers are not stored")
    return Resume(
        messages=state.messages,
        tool_calls=state.tool_calls,
        answers=state.answers,
        input_tokens=state.input_tokens,
        output_tokens=state.output_tokens,
        requests=state.requests,
        tool_call_count=state.tool_call_count,
    )


def _payload(settings: Settings, run_id: str, session: Session) -> str:
    """The run as `GET /agent/runs/{run_id}` shows it now (with its `required_action`)."""
    run = session.scalar(
        select(Run).where(Run.id == run_id).execution_options(populate_existing=True)
    )
    assert run is not None  # just updated in this transaction
    return run_out(settings, run).model_dump_json(exclude_unset=True)


async def park(
    *,
    batcher: WriteBatcher,
    settings: Settings,
    claim: ClaimedRun,
    owner: str,
    recorder: RunRecorder,
    outcome: RunOutcome,
) -> Announcement | None:
    """Write the run's wait; None when the lease was lost (nothing written)."""
    now = utcnow()
    expires_at = now + timedelta(seconds=settings.run_action_timeout_seconds)
    usage = Usage(
        input_tokens=outcome.input_tokens,
        output_tokens=outcome.output_tokens,
        requests=outcome.requests,
        tool_calls=outcome.tool_calls,
        credits_micro=credits_micro(
            settings,
            model=claim.model,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
        ),
    )
    waiting = Waiting(outcome.pending or [], expires_at, outcome.messages, usage)
    rows = recorder.terminal_rows(
        EventKind.REQUIRES_ACTION,
        {"status": RunStatus.REQUIRES_ACTION, "required_action": waiting.required_action()},
    )
    return await writes.park(
        batcher,
        run=claim,
        owner=owner,
        waiting=waiting,
        rows=rows,
        payload=functools.partial(_payload, settings, claim.run_id),
        now=now,
    )


async def expire_waits(*, db: Database, broker: Broker, settings: Settings) -> int:
    """Fail the runs whose wait for their caller expired (ACTION_EXPIRED); how many."""
    now = utcnow()
    async with db.session(write=False) as session:
        expired = await waiting_runs.expired_waits(session, now=now)
    failed = 0
    for run in expired:
        ending = Ending(
            RunStatus.FAILED,
            usage=Usage.of(run),
            error_code="ACTION_EXPIRED",
            error_message="the run's required action was not answered within "
            f"{settings.run_action_timeout_seconds:g} s",
        )
        announcement = await writes.expire_wait(db, run=run, ending=ending, now=now)
        if announcement is None:
            continue  # answered or cancelled meanwhile
        failed += 1
        log.warning("run %s failed: ACTION_EXPIRED", run.run_id)
        announcement.send(broker)
    return failed
