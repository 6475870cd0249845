"""What a run of a thread is given as its history, composed in one place.

The model's history of a run is, in order:
1. the thread's latest summary (compaction's, `thread_summaries`), which stands in for
   everything it covers: the fork's base and the runs up to its `through_run_id`; with no
   summary, the thread's `base_messages` (a fork's copy of the original's history);
2. the messages of the thread's runs in history (`run_queue.IN_HISTORY`) older than the run
   and not covered by that summary, oldest first.

The claim reads it in one statement (`thread_history`); `GET /threads/{id}/messages` lists the
same conversation with the covered originals marked (`covered`, the same rule in Python).
Nothing here imports pydantic-ai: an API process never loads it
(docs/decisions/0015-imports-on-first-use.md); the worker validates the JSON
(`runtime.executor.history_from_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from sqlalchemy import (
    JSON,
    DateTime,
    Table,
    Text,
    and_,
    bindparam,
    literal,
    null,
    or_,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from atrium.db.models import Run, Thread, ThreadSummary
from atrium.kit.json_object import JsonObject
from atrium.runs.lifecycle.run_queue import IN_HISTORY
from atrium.runtime.history_parts import HistoryPart

_RUNS = cast(Table, Run.__table__)
_THREADS = cast(Table, Thread.__table__)
_SUMMARIES = cast(Table, ThreadSummary.__table__)

# How the summary text is introduced to the model (see `summary_messages`).
SUMMARY_HEADING: Final = "Summary of the earlier conversation:"

# The thread's latest summary: the newest one stands in for everything before it.
_LATEST_SUMMARY = (
    select(_SUMMARIES.c.id)
    .where(_SUMMARIES.c.thread_id == bindparam("b_thread_id"))
    .order_by(_SUMMARIES.c.created_at.desc(), _SUMMARIES.c.id.desc())
    .limit(1)
    .scalar_subquery()
)
_SUMMARY_THROUGH = (
    select(_SUMMARIES.c.through_run_id).where(_SUMMARIES.c.id == _LATEST_SUMMARY).scalar_subquery()
)
_CUT = _RUNS.alias("cut")
# Where the latest summary's coverage ends: the creation of its `through_run_id` (NULL when it
# covers only the base, or when there is none). Uncorrelated, so computed once per statement.
_CUT_CREATED_AT = select(_CUT.c.created_at).where(_CUT.c.id == _SUMMARY_THROUGH).scalar_subquery()
# A run after that end (every run when there is none).
_AFTER_SUMMARY = or_(
    _CUT_CREATED_AT.is_(None),
    _RUNS.c.created_at > _CUT_CREATED_AT,
    and_(_RUNS.c.created_at == _CUT_CREATED_AT, _RUNS.c.id > _SUMMARY_THROUGH),
)
_NO_TEXT = null().cast(Text)
_NO_MESSAGES = null().cast(JSON)
_NO_TIME = null().cast(DateTime)
_NO_ID = null().cast(Text)
_SUMMARY, _BASE, _RUN = 0, 1, 2
# One statement: the summary, else the base, then the runs after what the summary covers. A
# UNION ALL (no equality of JSON needed, which PostgreSQL's `json` lacks), ordered by part and
# then by the runs' order.
_PARTS = union_all(
    select(
        literal(_SUMMARY).label("part"),
        _NO_TIME.label("created_at"),
        _NO_ID.label("id"),
        _SUMMARIES.c.text.label("text"),
        _NO_MESSAGES.label("messages"),
    ).where(_SUMMARIES.c.id == _LATEST_SUMMARY),
    select(
        literal(_BASE),
        _NO_TIME,
        _NO_ID,
        _NO_TEXT,
        _THREADS.c.base_messages,
    ).where(
        _THREADS.c.id == bindparam("b_thread_id"),
        _THREADS.c.base_messages.is_not(None),
        _LATEST_SUMMARY.is_(None),
    ),
    select(
        literal(_RUN),
        _RUNS.c.created_at,
        _RUNS.c.id,
        _NO_TEXT,
        _RUNS.c.messages,
    ).where(
        _RUNS.c.thread_id == bindparam("b_thread_id"),
        IN_HISTORY,
        _RUNS.c.id != bindparam("b_run_id"),
        or_(
            _RUNS.c.created_at < bindparam("b_created_at"),
            and_(
                _RUNS.c.created_at == bindparam("b_created_at"),
                _RUNS.c.id < bindparam("b_run_id"),
            ),
        ),
        _AFTER_SUMMARY,
    ),
).subquery("history")
_THREAD_HISTORY = select(_PARTS.c.part, _PARTS.c.id, _PARTS.c.text, _PARTS.c.messages).order_by(
    _PARTS.c.part, _PARTS.c.created_at, _PARTS.c.id
)


def summary_messages(text: str) -> list[JsonObject]:
    """A summary as the model is given it: one user message (pydantic-ai's JSON form of a
    `ModelRequest` with a `UserPromptPart`) that says it is a summary.

    A user message, not a system prompt: the summary is written from the conversation, which
    holds users' and tools' text, and must not gain a system prompt's authority over the
    agent's instructions; every provider also takes a user message first in a history (some
    lift system parts out of the conversation altogether, losing where it stood)."""
    return [
        {
            "kind": "request",
            "parts": [{"part_kind": "user-prompt", "content": f"{SUMMARY_HEADING}\n\n{text}"}],
        }
    ]


def thread_history(
    session: Session, *, thread_id: str, run_id: str, created_at: datetime
) -> list[list[Any]]:
    """The history of the run `run_id` (created at `created_at`) of the thread, as lists of
    pydantic-ai JSON messages in order (see the module docstring). Read by the claim, in the
    writer's transaction: one statement, no extra read session per run."""
    parts = history_parts(session, thread_id=thread_id, run_id=run_id, created_at=created_at)
    return [part.messages for part in parts]


def history_parts(
    session: Session, *, thread_id: str, run_id: str, created_at: datetime
) -> list[HistoryPart]:
    """`thread_history`, each part with where it comes from (compaction needs the runs')."""
    rows = session.connection().execute(
        _THREAD_HISTORY,
        {"b_thread_id": thread_id, "b_run_id": run_id, "b_created_at": created_at},
    )
    parts: list[HistoryPart] = []
    for part, source, text, messages in rows:
        if part == _SUMMARY:
            parts.append(HistoryPart(None, summary_messages(text), summary=True))
        elif messages:
            parts.append(HistoryPart(source if part == _RUN else None, messages))
    return parts


def insert_summary(session: Session, summary: ThreadSummary) -> None:
    """Store a summary compaction wrote: from then on it stands in for what it covers."""
    session.add(summary)


@dataclass(frozen=True, slots=True)
class SummaryMark:
    """Where a summary stands in its thread: after the run `through_run_id` (created at
    `through_created_at`), or after the fork's base when both are None."""

    summary_id: str
    through_run_id: str | None
    through_created_at: datetime | None


def covered(
    summary: SummaryMark | None, *, created_at: datetime | None, run_id: str | None
) -> bool:
    """Whether the summary stands in for the run `run_id` created at `created_at` (both None:
    the fork's base), as `_AFTER_SUMMARY` decides it for the claim."""
    if summary is None:
        return False
    if run_id is None or created_at is None:
        return True  # every summary covers the base
    if summary.through_run_id is None or summary.through_created_at is None:
        return False
    return (created_at, run_id) <= (summary.through_created_at, summary.through_run_id)
