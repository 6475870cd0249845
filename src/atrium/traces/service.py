"""A run's trace as the API shows it: the spans the OTLP export sends (same builder)."""

from __future__ import annotations

import re
from datetime import datetime

from atrium.db.engine import Database
from atrium.kit.time import as_utc, isoformat
from atrium.settings import Settings
from atrium.traces import repository
from atrium.traces.errors import TracedRunNotFound
from atrium.traces.schemas import SpanEventOut, SpanLinkOut, SpanOut, TraceOut
from atrium.traces.spans import Span, build_spans

_RUN_ID = re.compile(r"^run_[A-Za-z0-9_-]{1,36}$")


async def run_trace(db: Database, settings: Settings, *, account_id: int, run_id: str) -> TraceOut:
    # An id no run can have (a NUL, 5,000 characters) is a 404 before any query: PostgreSQL
    # refuses a NUL in a text parameter.
    if not _RUN_ID.match(run_id):
        raise TracedRunNotFound(run_id)
    found = await repository.stored_traces(
        db, [run_id], account_id=account_id, content=settings.trace_content
    )
    if not found:
        raise TracedRunNotFound(run_id)
    stored = found[0]
    spans = build_spans(stored.run, stored.events, content=settings.trace_content)
    origin = stored.run.created_at
    return TraceOut(
        run_id=run_id,
        trace_id=spans[0].trace_id,
        spans=[_span_out(span, origin) for span in spans],
    )


def _span_out(span: Span, origin: datetime) -> SpanOut:
    return SpanOut(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        name=span.name,
        kind=span.kind,
        start=isoformat(span.start),
        end=None if span.end is None else isoformat(span.end),
        start_offset_ms=_ms(span.start, origin),
        duration_ms=None if span.end is None else _ms(span.end, span.start),
        status=span.status,
        status_message=span.status_message,
        attributes=span.attributes,
        links=[SpanLinkOut(**_fields(link)) for link in span.links],
        events=[
            SpanEventOut(name=event.name, time=isoformat(event.time), attributes=event.attributes)
            for event in span.events
        ],
    )


def _fields(link: object) -> dict[str, object]:
    return {name: getattr(link, name) for name in ("trace_id", "span_id", "attributes")}


def _ms(later: datetime, earlier: datetime) -> float:
    return round((as_utc(later) - as_utc(earlier)).total_seconds() * 1000, 3)
