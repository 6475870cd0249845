"""Compacting a thread's history: read it, cut it, summarise the old part, store the summary.

Used by the worker before a run whose history is over its budget, and by
`POST /threads/{id}/compact`. Imported on first use only: it brings pydantic-ai
(docs/decisions/0015-imports-on-first-use.md). The rules (budget, where to cut, the
transcript) are `runtime.compaction`'s; storing is `thread_history.insert_summary`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from atrium.agents.config import AgentConfig
from atrium.db.engine import Database
from atrium.db.models import ThreadSummary
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from atrium.providers.targets import ProviderTarget
from atrium.runs.lifecycle.thread_history import history_parts, insert_summary, summary_messages
from atrium.runtime import compaction
from atrium.runtime.billing import credits_micro
from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.executor import Runtime


@dataclass(frozen=True, slots=True)
class Compacted:
    """A stored summary, and the history a run goes on with."""

    summary: ThreadSummary
    history: list[list[Any]]


@dataclass(frozen=True, slots=True)
class Position:
    """Whose history: the thread, and the run it is read for (its history is what came before
    it; on demand, a run id and time after every run of the thread)."""

    thread_id: str
    run_id: str
    created_at: datetime


async def compact(
    db: Database,
    runtime: Runtime,
    *,
    position: Position,
    config: AgentConfig,
    target: ProviderTarget | None,
    force: bool = False,
    cancellation: RunCancellation | None = None,
) -> Compacted | None:
    """Summarise the oldest part of the history if it is over the budget (any size when
    `force`); None when there is nothing to summarise. The summarising request raises what a
    run's request raises (`Runtime.summarise`)."""
    async with db.session(write=False) as session:
        parts = await session.run_sync(
            lambda sync: history_parts(
                sync,
                thread_id=position.thread_id,
                run_id=position.run_id,
                created_at=position.created_at,
            )
        )
    budget = compaction.budget_of(config)
    plan = compaction.cut(
        parts,
        budget,
        force=force,
    )
    if plan is None:
        return None
    text = compaction.transcript(plan.covered, budget)
    written = await runtime.summarise(config, target, text, cancellation)
    model = str(config.get("model") or "")
    row = ThreadSummary(
        id=new_id("sum"),
        thread_id=position.thread_id,
        through_run_id=plan.through_run_id,
        text=written.text,
        input_tokens=written.input_tokens,
        output_tokens=written.output_tokens,
        credits_micro=credits_micro(
            runtime.settings,
            model=model,
            input_tokens=written.input_tokens,
            output_tokens=written.output_tokens,
        ),
        created_at=utcnow(),
    )
    await db.write_sync(lambda session: insert_summary(session, row))
    history = [summary_messages(written.text), *(part.messages for part in plan.kept)]
    return Compacted(row, history)
