"""`GET /api/v1/public/agent/runs/{run_id}/trace`: the run's spans as JSON."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SpanLinkOut(BaseModel):
    trace_id: str
    span_id: str
    attributes: dict[str, str | int | float | bool]


class SpanEventOut(BaseModel):
    name: str
    time: str
    attributes: dict[str, str | int | float | bool]


class SpanOut(BaseModel):
    trace_id: str = Field(description="32 hex digits; the caller's when it sent `traceparent`.")
    span_id: str = Field(description="16 hex digits, the same in every build of the trace.")
    parent_span_id: str | None
    name: str = Field(
        description="`invoke_agent {agent_id}`, `execute` or `retry` (a stretch of execution), "
        "`chat {model}`, `execute_tool {name}` or `wait`."
    )
    kind: str = Field(description="`internal` or `client` (a model request).")
    start: str
    end: str | None = Field(description="Null while the span is open.")
    start_offset_ms: float = Field(description="Milliseconds after the run's creation.")
    duration_ms: float | None
    status: str = Field(description="`unset`, `ok` or `error`.")
    status_message: str | None
    attributes: dict[str, str | int | float | bool]
    links: list[SpanLinkOut]
    events: list[SpanEventOut]


class TraceOut(BaseModel):
    run_id: str
    trace_id: str
    spans: list[SpanOut] = Field(description="Parents before their children, in start order.")
