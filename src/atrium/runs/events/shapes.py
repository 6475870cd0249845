"""Run events: the one shape they take in the database, the broker and SSE (their kinds are
`atrium.db.models.EventKind`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from sqlalchemy import Row

from atrium.db.models import RunEvent
from atrium.kit.time import isoformat


class EventRow(TypedDict):
    """The values of one `run_events` row (a plain dict: rows go to `executemany` as they are)."""

    run_id: str
    seq: int
    kind: str
    data: dict[str, Any]
    created_at: datetime


def event_row(
    run_id: str, seq: int, kind: str, payload: dict[str, Any], created_at: datetime
) -> EventRow:
    """The values of one `run_events` row."""
    return {"run_id": run_id, "seq": seq, "kind": kind, "data": payload, "created_at": created_at}


def event_message(row: EventRow) -> dict[str, Any]:
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


def stored_event_message(event: RunEvent | Row[*tuple[Any, ...]]) -> dict[str, Any]:
    return event_message(
        {
            "run_id": event.run_id,
            "seq": event.seq,
            "kind": event.kind,
            "data": event.data,
            "created_at": event.created_at,
        }
    )
