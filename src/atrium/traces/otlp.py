"""Spans to OTLP/HTTP with the official OpenTelemetry SDK and exporter.

Imported only by the exporter of a process with `ATRIUM_OTLP_ENDPOINT` set, in a thread
(docs/decisions/0015-imports-on-first-use.md): a process without it never loads the SDK.
"""

from __future__ import annotations

from datetime import datetime

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from atrium.kit.time import as_utc
from atrium.traces.spans import Span

_KINDS = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT}
_STATUS = {"unset": StatusCode.UNSET, "ok": StatusCode.OK, "error": StatusCode.ERROR}
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)


class OtlpSpans:
    """One exporter per process: its HTTP session is kept between exports."""

    def __init__(self, endpoint: str, *, timeout_seconds: float) -> None:
        self._exporter = OTLPSpanExporter(
            endpoint=endpoint.rstrip("/") + "/v1/traces", timeout=timeout_seconds
        )
        self._resource = Resource.create({"service.name": "atrium"})
        self._scope = InstrumentationScope("atrium")

    def export(self, spans: list[Span]) -> bool:
        """Send closed spans (blocking: call it in a thread); True once the collector took them."""
        readable = [self._readable(span) for span in spans if span.end is not None]
        if not readable:
            return True
        return self._exporter.export(readable) is SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._exporter.shutdown()  # type: ignore[no-untyped-call]

    def _readable(self, span: Span) -> ReadableSpan:
        assert span.end is not None
        parent = (
            None
            if span.parent_span_id is None
            else SpanContext(
                int(span.trace_id, 16),
                int(span.parent_span_id, 16),
                # The run span's parent is the caller's, in another process.
                is_remote=span.name.startswith("invoke_agent"),
                trace_flags=_SAMPLED,
            )
        )
        return ReadableSpan(
            name=span.name,
            context=_context(span.trace_id, span.span_id),
            parent=parent,
            resource=self._resource,
            attributes=dict(span.attributes),
            events=[
                Event(event.name, dict(event.attributes), timestamp=_nanos(event.time))
                for event in span.events
            ],
            links=[
                Link(_context(link.trace_id, link.span_id), dict(link.attributes))
                for link in span.links
            ],
            kind=_KINDS[span.kind],
            status=Status(_STATUS[span.status], span.status_message),
            start_time=_nanos(span.start),
            end_time=_nanos(span.end),
            instrumentation_scope=self._scope,
        )


def _context(trace_id: str, span_id: str) -> SpanContext:
    return SpanContext(int(trace_id, 16), int(span_id, 16), is_remote=False, trace_flags=_SAMPLED)


def _nanos(moment: datetime) -> int:
    """Nanoseconds since the epoch (SQLite hands back naive UTC datetimes)."""
    aware = as_utc(moment)
    return int(aware.timestamp()) * 1_000_000_000 + aware.microsecond * 1_000
