"""The SQL of traces: runs and their events as the span builder reads them, the export marks,
and the finished runs whose export was cut off."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, Row, Table, bindparam, select

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import Agent, EventKind, Run, RunEvent, RunStatus
from atrium.traces.spans import ModelAnswer, TracedEvent, TracedRun

_FINISHED = (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED)
_RUN_COLUMNS = (
    Run.id,
    Run.account_id,
    Run.thread_id,
    Run.agent_id,
    Run.model,
    Run.status,
    Run.prompt,
    Run.result,
    Run.error_code,
    Run.error_message,
    Run.input_tokens,
    Run.output_tokens,
    Run.requests,
    Run.tool_calls,
    Run.credits_micro,
    Run.attempts,
    Run.created_at,
    Run.traceparent,
    Run.trace_exported_seq,
    Run.last_event_seq,
    Run.messages,
    Run.agent_version,
    # The agent's name as it is now (a rename shows on spans sent later).
    Agent.name.label("agent_name"),
)
_MARK = (
    cast(Table, Run.__table__)
    .update()
    .where(Run.id == bindparam("run"), Run.trace_exported_seq < bindparam("seq"))
    .values(trace_exported_seq=bindparam("seq"))
)


@dataclass(frozen=True, slots=True)
class StoredTrace:
    run: TracedRun
    events: list[TracedEvent]
    # The last event whose spans were exported.
    exported_seq: int


async def stored_traces(
    db: Database, run_ids: list[str], *, account_id: int | None = None, content: bool
) -> list[StoredTrace]:
    """Point reads: the runs (of `account_id`, when given) by primary key, then each run's
    events a page at a time through (run_id, seq), in `run_ids`' order. Without `content` the
    streamed text stays in the database (no span shows it)."""
    runs = (
        select(*_RUN_COLUMNS).outerjoin(Agent, Agent.id == Run.agent_id).where(Run.id.in_(run_ids))
    )
    if account_id is not None:
        runs = runs.where(Run.account_id == account_id)
    rows = {row.id: row for row in await db.point_read(lambda conn: conn.execute(runs).all())}
    found: list[StoredTrace] = []
    for run_id in run_ids:
        row = rows.get(run_id)
        if row is None:
            continue
        events: list[TracedEvent] = []
        # Events are appended in order of `seq`: those up to the row's last are all stored.
        while not events or events[-1].seq < row.last_event_seq:
            after = events[-1].seq if events else 0
            bounds = {"run": run_id, "after": after, "through": row.last_event_seq}
            page = await db.point_read(functools.partial(_read_page, content, bounds))
            events.extend(TracedEvent(e.seq, e.kind, e.data, e.created_at) for e in page)
            if len(page) < _PAGE:
                break
        found.append(
            StoredTrace(run=_traced_run(row), events=events, exported_seq=row.trace_exported_seq)
        )
    return found


_PAGE = 500


def _read_page(content: bool, bounds: dict[str, Any], conn: Connection) -> Sequence[Row[Any]]:
    return conn.execute(_events_page(content), bounds).all()


@functools.cache
def _events_page(content: bool) -> Any:
    query = (
        select(RunEvent.seq, RunEvent.kind, RunEvent.data, RunEvent.created_at)
        .where(
            RunEvent.run_id == bindparam("run"),
            RunEvent.seq > bindparam("after"),
            RunEvent.seq <= bindparam("through"),
        )
        .order_by(RunEvent.seq)
        .limit(_PAGE)
    )
    return query if content else query.where(RunEvent.kind != EventKind.MESSAGE_DELTA)


def _traced_run(row: Any) -> TracedRun:
    return TracedRun(
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
        agent_name=row.agent_name,
        agent_version=None if row.agent_version is None else str(row.agent_version),
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


async def mark_exported(writer: WriteBatcher, marks: list[tuple[str, int]]) -> None:
    """Synchronous write through the batcher: the spans closed by each run's events up to its
    sequence number were sent (a mark never moves back)."""
    values = [{"run": run_id, "seq": seq} for run_id, seq in marks]
    await writer.write_sync(lambda session: session.execute(_MARK, values))


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
