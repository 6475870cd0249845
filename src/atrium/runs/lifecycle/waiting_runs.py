"""SQL of runs that wait for their caller (`requires_action`, docs/design.md#requires-action),
for the transitions of `runs.lifecycle` (`wait`, `answer`, `end_wait`) and the worker that
resumes a run.

Each change of a waiting run is one conditional UPDATE, so exactly one of two racing writers
wins: the worker parks a run only while it holds its lease; an answer, a cancel and the expiry
sweep each take the run only while it still waits (and, for an answer, on the same wait).
The updates do not touch the session's loaded objects (`synchronize_session=False`): callers
refresh the run they show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.models import Run, RunAction
from atrium.runs.events import event_store
from atrium.runs.lifecycle import run_queue
from atrium.runs.lifecycle.run_queue import from_states
from atrium.runs.lifecycle.transitions import ANSWER, END_WAIT, WAIT
from atrium.runs.run_columns import RunColumns
from atrium.runtime.waited_calls import Answers, PendingCall

# The status of a run that waits for its caller.
REQUIRES_ACTION = WAIT.target


def park(
    session: Session, *, run_id: str, owner: str, attempt: int, values: RunColumns
) -> int | None:
    """Running → requires_action while this worker holds the lease; the new wait's number, or
    None (nothing written) when the lease was lost. The lease and worker slot are given back."""
    waits = session.scalar(
        update(Run)
        .where(
            Run.id == run_id,
            Run.lease_owner == owner,
            Run.attempts == attempt,
            from_states(Run.status, WAIT.sources),
        )
        .values(
            status=WAIT.target,
            lease_owner=None,
            lease_expires_at=None,
            waits=Run.waits + 1,
            **values,
        )
        .returning(Run.waits)
        .execution_options(synchronize_session=False)
    )
    return None if waits is None else int(waits)


def requeue_answered(session: Session, *, run_id: str, wait: int, now: datetime) -> int | None:
    """Requires_action → queued for the answer to wait number `wait`, if the run still waits on
    it and has not expired; the sequence number of its `run.queued` event, or None."""
    answered = [
        Run.id == run_id,
        from_states(Run.status, ANSWER.sources),
        Run.waits == wait,
        Run.action_expires_at > now,
    ]
    queued: RunColumns = {
        "status": ANSWER.target,
        # Attempts count the tries of one stretch of running: a resumed run is not a retry
        # (no `run.restarted`, and its waits do not use up `run_max_attempts`).
        "attempts": 0,
        "required_action": None,
        "action_expires_at": None,
    }
    return event_store.update_run_for_event(session, where=answered, values=queued)


def finish_waiting(
    session: Session, *, run_id: str, now: datetime, values: RunColumns
) -> int | None:
    """Requires_action → a terminal state (cancelled, or failed on expiry) while it still waits;
    the sequence number of its final event, or None when the run moved on first."""
    ended: RunColumns = {
        "required_action": None,
        "action_expires_at": None,
        "finished_at": now,
        **values,
    }
    waiting = [Run.id == run_id, from_states(Run.status, END_WAIT.sources)]
    return event_store.update_run_for_event(session, where=waiting, values=ended)


class AnswerRow(TypedDict):
    """A caller's answer to a run's wait number `wait`: one `run_actions` row."""

    run_id: str
    wait: int
    tool_calls: list[PendingCall]
    answers: Answers
    idempotency_key: str | None
    request_hash: str
    created_at: datetime


def add_answer(session: Session, values: AnswerRow) -> None:
    session.add(RunAction(**values))


async def answer_by_key(session: AsyncSession, *, run_id: str, key: str) -> RunAction | None:
    """The run's answer sent with this Idempotency-Key (in the request's session)."""
    return await session.scalar(
        select(RunAction).where(RunAction.run_id == run_id, RunAction.idempotency_key == key)
    )


@dataclass(frozen=True, slots=True)
class WaitingState:
    """What a worker needs to resume an answered run."""

    messages: list[Any]
    tool_calls: list[PendingCall]
    answers: Answers
    input_tokens: int
    output_tokens: int
    requests: int
    tool_call_count: int


async def state_of(session: AsyncSession, *, run_id: str, wait: int) -> WaitingState | None:
    """The run's messages and usage at its wait number `wait`, with the caller's answers."""
    run = (
        await session.execute(
            select(
                Run.messages, Run.input_tokens, Run.output_tokens, Run.requests, Run.tool_calls
            ).where(Run.id == run_id)
        )
    ).first()
    action = await session.scalar(
        select(RunAction).where(RunAction.run_id == run_id, RunAction.wait == wait)
    )
    if run is None or action is None:
        return None
    return WaitingState(
        messages=list(run.messages or []),
        tool_calls=list(action.tool_calls),
        # Stored from `Answers` only (`runs.api.actions`).
        answers=cast(Answers, dict(action.answers)),
        input_tokens=run.input_tokens,
        output_tokens=run.output_tokens,
        requests=run.requests,
        tool_call_count=run.tool_calls,
    )


@dataclass(frozen=True, slots=True)
class ExpiredWait:
    run_id: str
    account_id: int
    agent_id: str
    webhook_url: str | None
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int
    credits_micro: int
    waits: int


async def expired_waits(
    session: AsyncSession, *, now: datetime, limit: int = 100
) -> Sequence[ExpiredWait]:
    expired = [from_states(Run.status, END_WAIT.sources), Run.action_expires_at <= now]
    return await run_queue.runs_as(session, ExpiredWait, where=expired, limit=limit)
