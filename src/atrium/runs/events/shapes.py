"""Run events: the one shape they take in the database, the broker and SSE (their kinds are
`atrium.db.models.EventKind`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NotRequired, TypedDict

from sqlalchemy import Row

from atrium.db.models import RunEvent
from atrium.kit.json_object import JsonObject
from atrium.kit.time import isoformat


class EventRow(TypedDict):
    """The values of one `run_events` row (a plain dict: rows go to `executemany` as they are)."""

    run_id: str
    seq: int
    kind: str
    # The event's payload: its keys depend on its kind.
    data: JsonObject
    created_at: datetime


class EventMessage(TypedDict):
    """What a reader receives, live or replayed: an SSE event's `id` (the run's sequence
    number; none on a stream's closing error, which is no event of the run), `event` and
    `data`. `_frame` is its SSE frame once encoded (`stream.sse_frame`): a live message is
    shared by every stream of its run."""

    id: NotRequired[int]
    event: str
    data: JsonObject
    _frame: NotRequired[bytes]


def event_row(
    run_id: str, seq: int, kind: str, payload: JsonObject, created_at: datetime
) -> EventRow:
    """The values of one `run_events` row."""
    return {"run_id": run_id, "seq": seq, "kind": kind, "data": payload, "created_at": created_at}


def event_message(row: EventRow) -> EventMessage:
    """`{"id", "event", "data"}`: what a reader receives, live or replayed."""
    return {
        "id": row["seq"],
        "event": row["kind"],
        "data": {
            "run_id": row["run_id"],
            "seq": row["seq"],
            "created_at": isoformat(row["created_at"]),
            **row["data"],
        },
    }


def stored_event_message(event: RunEvent | Row[*tuple[Any, ...]]) -> EventMessage:
    return event_message(
        {
            "run_id": event.run_id,
            "seq": event.seq,
            "kind": event.kind,
            "data": event.data,
            "created_at": event.created_at,
        }
    )
