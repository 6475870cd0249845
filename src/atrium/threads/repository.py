"""SQL of the threads routes: threads, the tallies of their runs, and the stored conversation
(a fork's base, the runs in history, the summaries) that `conversation` turns into items.

Which runs are in a thread's history is `run_queue.IN_HISTORY`, the claim's own predicate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents.config import AgentConfig, stored_config
from atrium.db.models import Run, RunStatus, Thread, ThreadSummary
from atrium.kit.cursor import Position, older_than
from atrium.runs.lifecycle.run_queue import IN_HISTORY

UNFINISHED = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.REQUIRES_ACTION)


@dataclass(frozen=True, slots=True)
class LastRunRow:
    id: str
    status: str
    agent_id: str
    created_at: datetime


@dataclass(slots=True)
class RunTally:
    """A thread's runs at a glance: how many, the statuses among them, the newest."""

    runs: int = 0
    statuses: frozenset[str] = frozenset()
    last_run: LastRunRow | None = None


@dataclass(frozen=True, slots=True)
class HistoryRun:
    """A run in its thread's history: its place in the thread and the messages it added."""

    id: str
    created_at: datetime
    messages: list[Any]


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """A summary and the place of the run it covers through (None: only the base)."""

    id: str
    text: str
    through_run_id: str | None
    through_created_at: datetime | None
    created_at: datetime


async def add_thread(session: AsyncSession, thread: Thread) -> Thread:
    session.add(thread)
    await session.flush()
    return thread


async def thread_of_account(
    session: AsyncSession, *, account_id: int, thread_id: str
) -> Thread | None:
    return await session.scalar(
        select(Thread).where(Thread.id == thread_id, Thread.account_id == account_id)
    )


async def list_threads(
    session: AsyncSession,
    *,
    account_id: int,
    agent_id: str | None,
    agent_version: int | None,
    metadata: Mapping[str, str],
    before: Position | None,
    limit: int,
) -> Sequence[Thread]:
    """The account's threads newest first, strictly after the cursor position `before`: those
    with a run of `agent_id` (of its version `agent_version`, when given), whose metadata has
    each key of `metadata` with that text (as text: the caller keeps the string values only,
    see `service.list_threads`)."""
    query = select(Thread).where(Thread.account_id == account_id)
    if agent_id is not None:
        of_agent = exists().where(Run.thread_id == Thread.id, Run.agent_id == agent_id)
        if agent_version is not None:
            of_agent = of_agent.where(Run.agent_version == agent_version)
        query = query.where(of_agent)
    for key, value in metadata.items():
        query = query.where(Thread.thread_metadata[key].as_string() == value)
    if before is not None:
        query = query.where(older_than(Thread.created_at, Thread.id, before))
    query = query.order_by(Thread.created_at.desc(), Thread.id.desc()).limit(limit)
    return (await session.scalars(query)).all()


async def run_tallies(session: AsyncSession, thread_ids: Sequence[str]) -> dict[str, RunTally]:
    """Each thread's run count, statuses and newest run: two grouped reads for a page."""
    tallies = {thread_id: RunTally() for thread_id in thread_ids}
    if not thread_ids:
        return tallies
    counted = await session.execute(
        select(Run.thread_id, Run.status, func.count())
        .where(Run.thread_id.in_(thread_ids))
        .group_by(Run.thread_id, Run.status)
    )
    for thread_id, status, count in counted:
        tally = tallies[thread_id]
        tally.runs += count
        tally.statuses = tally.statuses | {status}
    newest = (
        select(
            Run.thread_id,
            Run.id,
            Run.status,
            Run.agent_id,
            Run.created_at,
            func.row_number()
            .over(partition_by=Run.thread_id, order_by=(Run.created_at.desc(), Run.id.desc()))
            .label("rank"),
        )
        .where(Run.thread_id.in_(thread_ids))
        .subquery()
    )
    rows = await session.execute(
        select(
            newest.c.thread_id, newest.c.id, newest.c.status, newest.c.agent_id, newest.c.created_at
        ).where(newest.c.rank == 1)
    )
    for thread_id, run_id, status, agent_id, created_at in rows:
        tallies[thread_id].last_run = LastRunRow(run_id, status, agent_id, created_at)
    return tallies


async def runs_in_history(
    session: AsyncSession,
    *,
    thread_id: str,
    from_position: Position | None = None,
    through: Position | None = None,
    limit: int | None = None,
) -> list[HistoryRun]:
    """The thread's runs in history, oldest first: from `from_position` on (included), up to
    `through` (included), at most `limit`."""
    query = select(Run.id, Run.created_at, Run.messages).where(
        Run.thread_id == thread_id, IN_HISTORY
    )
    if from_position is not None:
        created_at, run_id = from_position
        query = query.where(
            or_(Run.created_at > created_at, and_(Run.created_at == created_at, Run.id >= run_id))
        )
    if through is not None:
        created_at, run_id = through
        query = query.where(
            or_(Run.created_at < created_at, and_(Run.created_at == created_at, Run.id <= run_id))
        )
    query = query.order_by(Run.created_at, Run.id)
    if limit is not None:
        query = query.limit(limit)
    rows = await session.execute(query)
    return [HistoryRun(run_id, created_at, messages or []) for run_id, created_at, messages in rows]


async def history_position(
    session: AsyncSession, *, thread_id: str, run_id: str
) -> Position | None:
    """(created_at, id) of the run if it is a run of the thread in its history."""
    row = (
        await session.execute(
            select(Run.created_at, Run.id).where(
                Run.id == run_id, Run.thread_id == thread_id, IN_HISTORY
            )
        )
    ).first()
    return None if row is None else (row[0], row[1])


async def summaries_of(session: AsyncSession, *, thread_id: str) -> list[SummaryRow]:
    """The thread's summaries, oldest first, each with the place of the run it covers through."""
    rows = await session.execute(
        select(
            ThreadSummary.id,
            ThreadSummary.text,
            ThreadSummary.through_run_id,
            Run.created_at,
            ThreadSummary.created_at,
        )
        .outerjoin(Run, Run.id == ThreadSummary.through_run_id)
        .where(ThreadSummary.thread_id == thread_id)
        .order_by(ThreadSummary.created_at, ThreadSummary.id)
    )
    return [SummaryRow(*row) for row in rows]


async def unfinished_runs(session: AsyncSession, *, thread_id: str) -> Sequence[Run]:
    """The thread's runs that are queued, running or waiting, oldest first."""
    return (
        await session.scalars(
            select(Run)
            .where(Run.thread_id == thread_id, Run.status.in_(UNFINISHED))
            .order_by(Run.created_at, Run.id)
        )
    ).all()


async def running_count(session: AsyncSession, *, thread_id: str) -> int:
    count = await session.scalar(
        select(func.count())
        .select_from(Run)
        .where(Run.thread_id == thread_id, Run.status == RunStatus.RUNNING)
    )
    return int(count or 0)


async def last_run_config(session: AsyncSession, *, thread_id: str) -> AgentConfig | None:
    """The agent config the thread's newest run was made with (compaction on demand uses its
    model and budget); None for a thread without runs."""
    config = await session.scalar(
        select(Run.agent_config)
        .where(Run.thread_id == thread_id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(1)
    )
    return stored_config(config) if config is not None else None
