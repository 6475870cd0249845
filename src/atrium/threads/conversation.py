"""A thread's conversation as `GET /threads/{id}/messages` lists it: the stored pydantic-ai
messages (a fork's base, then each run in history) flattened into items, with compaction's
summaries placed right after the last run they cover.

The model is given what `runs.lifecycle.thread_history` composes: the latest summary in place of
everything before it, then the later runs. Here the originals stay listed, marked
`compacted: true` by the same rule (`thread_history.covered`), and so are the earlier summaries
the latest one supersedes.

Items are ordered by a key (part, run's creation in microseconds, run id, index): part 0 is the
fork's base, part 1 the runs; a summary's index is past every message's of the run it covers
through. A cursor is the key of a page's last item, so a page reads only the runs from there on.
The messages are read as JSON, without pydantic-ai (never imported by an API process).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Thread
from atrium.errors import InvalidParameter
from atrium.kit.time import as_utc, isoformat
from atrium.runs.lifecycle.thread_history import SummaryMark, covered
from atrium.threads import repository
from atrium.threads.repository import HistoryRun, SummaryRow
from atrium.threads.schemas import ThreadMessage, ToolCallOut

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND: Final = timedelta(microseconds=1)
# A summary's index: past every message of the run it follows (its rank among the summaries
# added, so two summaries through one run keep their order).
_SUMMARY_INDEX: Final = 1_000_000
_BASE, _RUNS = 0, 1
CURSOR_PATTERN: Final = r"^[01]\.[0-9]{1,16}\.(-|[a-z]{1,8}_[A-Za-z0-9]{1,64})\.[0-9]{1,9}$"
_CURSOR = re.compile(CURSOR_PATTERN)

Key = tuple[int, int, str, int]


def _micros(value: datetime) -> int:
    return (as_utc(value) - _EPOCH) // _MICROSECOND


def encode_cursor(key: Key) -> str:
    part, micros, run_id, index = key
    return f"{part}.{micros}.{run_id or '-'}.{index}"


def decode_cursor(cursor: str) -> Key:
    """The key a cursor of `encode_cursor` names; a 400 on `cursor` for anything else."""
    if not _CURSOR.fullmatch(cursor):
        raise InvalidParameter("cursor", "cursor is not one this API returned")
    part, micros, run_id, index = cursor.split(".")
    return int(part), int(micros), "" if run_id == "-" else run_id, int(index)


@dataclass(frozen=True, slots=True)
class Page:
    items: list[ThreadMessage]
    next_cursor: str | None


def _timestamp(value: Any, fallback: datetime) -> str:
    if isinstance(value, str):
        try:
            return isoformat(datetime.fromisoformat(value))
        except ValueError:
            pass
    return isoformat(fallback)


def _arguments(args: Any) -> Any:
    """A call's arguments as JSON when the model's text is JSON, else that text."""
    if isinstance(args, str):
        try:
            return json.loads(args)
        except ValueError:
            return args
    return args


def items_of(
    messages: list[Any], *, source: str, run_id: str | None, fallback: datetime
) -> list[dict[str, Any]]:
    """The items of stored pydantic-ai messages (JSON): one per user prompt, per model response
    and per tool result. `source.<n>` is each item's id; `fallback` the time of an item whose
    message carries none."""
    items: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        parts = [part for part in message.get("parts") or [] if isinstance(part, dict)]
        if message.get("kind") == "response":
            found = [_response_fields(message, parts, fallback)]
        else:
            found = [_request_part_fields(part, fallback) for part in parts]
        for fields in found:
            if fields is None:
                continue
            # `object` given, not defaulted: the list leaves out the fields an item did not set.
            item = {"id": f"{source}.{len(items)}", "object": "thread.message", "run_id": run_id}
            items.append({**item, **fields})
    return items


def _response_fields(
    message: dict[str, Any], parts: list[dict[str, Any]], fallback: datetime
) -> dict[str, Any] | None:
    """A model response's item: its text and tool calls (None: only thinking, which is not
    part of what the conversation says)."""
    texts = [p.get("content") or "" for p in parts if p.get("part_kind") == "text"]
    calls = [
        ToolCallOut(
            id=str(p.get("tool_call_id") or ""),
            name=str(p.get("tool_name") or ""),
            arguments=_arguments(p.get("args")),
        )
        for p in parts
        if p.get("part_kind") == "tool-call"
    ]
    if not texts and not calls:
        return None
    extra: dict[str, Any] = {"tool_calls": calls} if calls else {}
    created = _timestamp(message.get("timestamp"), fallback)
    return dict(role="assistant", content="".join(texts) or None, created_at=created, **extra)


def _request_part_fields(part: dict[str, Any], fallback: datetime) -> dict[str, Any] | None:
    """The item of one part of a request to the model: a prompt, a tool's result or a retry
    (None: a part the conversation does not show)."""
    created = _timestamp(part.get("timestamp"), fallback)
    kind = part.get("part_kind")
    if kind == "user-prompt":
        return dict(role="user", content=part.get("content"), created_at=created)
    if kind == "system-prompt":
        return dict(role="system", content=part.get("content"), created_at=created)
    if kind == "tool-return" or (kind == "retry-prompt" and part.get("tool_name")):
        return dict(
            role="tool",
            content=part.get("content"),
            tool_call_id=part.get("tool_call_id"),
            name=part.get("tool_name"),
            # A retry prompt naming a tool is the tool's failed result, told to the model.
            is_error=kind == "retry-prompt"
            or part.get("outcome", "success") not in (None, "success"),
            created_at=created,
        )
    if kind in ("retry-prompt", "retry-feedback"):
        return dict(role="user", content=part.get("content"), is_error=True, created_at=created)
    return None


@dataclass(frozen=True, slots=True)
class _Summaries:
    """The thread's summaries with their keys; the latest one is what the model is given."""

    keyed: list[tuple[Key, SummaryRow]]
    latest: SummaryMark | None

    @classmethod
    def of(cls, rows: list[SummaryRow]) -> _Summaries:
        keyed: list[tuple[Key, SummaryRow]] = []
        for rank, row in enumerate(rows):
            if row.through_run_id is None or row.through_created_at is None:
                key: Key = (_BASE, 0, "", _SUMMARY_INDEX + rank)
            else:
                key = (
                    _RUNS,
                    _micros(row.through_created_at),
                    row.through_run_id,
                    _SUMMARY_INDEX + rank,
                )
            keyed.append((key, row))
        last = rows[-1] if rows else None
        latest = (
            None
            if last is None
            else SummaryMark(last.id, last.through_run_id, last.through_created_at)
        )
        return cls(sorted(keyed, key=lambda pair: pair[0]), latest)

    def item(self, key: Key, row: SummaryRow) -> tuple[Key, ThreadMessage]:
        message = ThreadMessage(
            id=f"{row.id}.0",
            object="thread.message",
            run_id=row.through_run_id,
            role="summary",
            content=row.text,
            compacted=self.latest is None or row.id != self.latest.summary_id,
            created_at=isoformat(row.created_at),
        )
        return key, message


def _base_items(thread: Thread, summaries: _Summaries) -> list[tuple[Key, ThreadMessage]]:
    items = items_of(
        thread.base_messages or [], source=thread.id, run_id=None, fallback=thread.created_at
    )
    compacted = covered(summaries.latest, created_at=None, run_id=None)
    return [
        ((_BASE, 0, "", index), ThreadMessage(**item, compacted=compacted))
        for index, item in enumerate(items)
    ]


def _run_items(run: HistoryRun, summaries: _Summaries) -> list[tuple[Key, ThreadMessage]]:
    items = items_of(run.messages, source=run.id, run_id=run.id, fallback=run.created_at)
    compacted = covered(summaries.latest, created_at=run.created_at, run_id=run.id)
    micros = _micros(run.created_at)
    return [
        ((_RUNS, micros, run.id, index), ThreadMessage(**item, compacted=compacted))
        for index, item in enumerate(items)
    ]


async def page(session: AsyncSession, *, thread: Thread, after: Key | None, limit: int) -> Page:
    """Up to `limit` items after the key `after`, oldest first, and the cursor of the next page.
    Reads the base only on the pages that show it, and the runs `limit + 1` at a time from the
    page's start on (every run in history adds at least one item)."""
    summaries = _Summaries.of(await repository.summaries_of(session, thread_id=thread.id))
    found: list[tuple[Key, ThreadMessage]] = []
    if after is None or after[0] == _BASE:
        found.extend(_base_items(thread, summaries))
    start = None
    if after is not None and after[0] == _RUNS:
        start = (_EPOCH + after[1] * _MICROSECOND, after[2])
    read: set[str] = set()
    while True:
        runs = await repository.runs_in_history(
            session, thread_id=thread.id, from_position=start, limit=limit + 1
        )
        for run in runs:
            if run.id not in read:  # each read starts at the previous read's last run
                read.add(run.id)
                found.extend(_run_items(run, summaries))
        exhausted = len(runs) <= limit
        # What is read so far, in order: the summaries up to the last run read (all of them
        # once no run follows), and the messages.
        edge: Key | None = None
        if not exhausted:
            edge = (_RUNS, _micros(runs[-1].created_at), runs[-1].id, 2 * _SUMMARY_INDEX)
        listed = found + [
            summaries.item(key, row) for key, row in summaries.keyed if edge is None or key <= edge
        ]
        shown = sorted(
            (pair for pair in listed if after is None or pair[0] > after), key=lambda p: p[0]
        )
        if exhausted or len(shown) > limit:
            break
        start = (runs[-1].created_at, runs[-1].id)
    if len(shown) <= limit:
        return Page([message for _key, message in shown], None)
    return Page([message for _key, message in shown[:limit]], encode_cursor(shown[limit - 1][0]))


async def count(session: AsyncSession, *, thread: Thread) -> int:
    """How many items the thread's conversation lists (every page of `page`)."""
    summaries = _Summaries.of(await repository.summaries_of(session, thread_id=thread.id))
    runs = await repository.runs_in_history(session, thread_id=thread.id)
    total = len(_base_items(thread, summaries)) + len(summaries.keyed)
    return total + sum(len(_run_items(run, summaries)) for run in runs)


async def history_up_to(
    session: AsyncSession, *, thread: Thread, through: tuple[datetime, str] | None
) -> list[Any]:
    """The thread's stored messages verbatim, its base then its runs in history up to
    `through` (None: no run), flat: a fork's base. Summaries are not copied: the fork starts from
    the whole conversation and is compacted on its own terms."""
    messages: list[Any] = list(thread.base_messages or [])
    if through is None:
        return messages
    for run in await repository.runs_in_history(session, thread_id=thread.id, through=through):
        messages.extend(run.messages)
    return messages
