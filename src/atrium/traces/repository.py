"""The SQL of traces: a run and its events as the span builder reads them, the export mark,
and the finished runs whose export was cut off."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from atrium.db.engine import Database
from atrium.db.models import Run, RunEvent, RunStatus
from atrium.traces.spans import ModelAnswer, TracedEvent, TracedRun

_FINISHED = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)


@dataclass(frozen=True, slots=True)
class StoredTrace:
    run: TracedRun
    events: list[TracedEvent]
    # The last event whose spans were exported.
    exported_seq: int


async def stored_trace(
    db: Database, *, run_id: str, account_id: int | None = None
) -> StoredTrace | None:
    """Session: the run (of `account_id`, when given) and its events, or None."""
    query = select(Run).where(Run.id == run_id)
    if account_id is not None:
        query = query.where(Run.account_id == account_id)
    async with db.session(write=False) as session:
        row = (await session.execute(query)).scalar_one_or_none()
        if row is None:
            return None
        # Events are appended in order of `seq`: those up to the row's last one are all stored.
        events = (
            await session.execute(
                select(RunEvent.seq, RunEvent.kind, RunEvent.data, RunEvent.created_at)
                .where(RunEvent.run_id == run_id, RunEvent.seq <= row.last_event_seq)
                .order_by(RunEvent.seq)
            )
        ).all()
    run = TracedRun(
        run_id=row.id,
        thread_id=row.thread_id,
        agent_id=row.agent_id,
        model=row.model,
        status=row.status,
        prompt=row.prompt,
        result=row.result,
        error_code=row.error_code,
        error_message=row.error_message,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        requests=row.requests,
        tool_calls=row.tool_calls,
        credits_micro=row.credits_micro,
        attempts=row.attempts,
        created_at=row.created_at,
        traceparent=row.traceparent,
        responses=model_answers(row.messages),
    )
    return StoredTrace(
        run=run,
        events=[TracedEvent(e.seq, e.kind, e.data, e.created_at) for e in events],
        exported_seq=row.trace_exported_seq,
    )


def model_answers(messages: list[Any] | None) -> tuple[ModelAnswer, ...]:
    """The usage and model of each `ModelResponse` in a run's stored messages (pydantic-ai's
    JSON form); nothing of their content."""
    answers = []
    for message in messages or []:
        if not isinstance(message, dict) or message.get("kind") != "response":
            continue
        usage = message.get("usage") or {}
        answers.append(
            ModelAnswer(
                input_tokens=int(usage.get("input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                model=_text(message.get("model_name")),
                response_id=_text(message.get("provider_response_id")),
                finish_reason=_text(message.get("finish_reason")),
            )
        )
    return tuple(answers)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


async def mark_exported(db: Database, *, run_id: str, through_seq: int) -> None:
    """A transaction of its own: the spans closed by events up to `through_seq` were sent."""
    async with db.transaction() as session:
        await session.execute(
            update(Run)
            .where(Run.id == run_id, Run.trace_exported_seq < through_seq)
            .values(trace_exported_seq=through_seq)
        )


async def unexported_finished(
    db: Database, *, created_after: datetime, finished_before: datetime, limit: int
) -> list[str]:
    """Session: finished runs created after `created_after` whose last spans were not sent
    (the status and creation index finds them)."""
    async with db.session(write=False) as session:
        rows = await session.execute(
            select(Run.id)
            .where(
                Run.status.in_(_FINISHED),
                Run.created_at > created_after,
                Run.finished_at < finished_before,
                Run.trace_exported_seq < Run.last_event_seq,
            )
            .order_by(Run.created_at)
            .limit(limit)
        )
        return list(rows.scalars())
