"""What the traces tests ask of a run's spans, over HTTP only."""

from __future__ import annotations

from typing import Any

import httpx

from tests.runs.helpers import RUNS
from tests.traces.otlp_receiver import ReceivedSpan

# A caller's W3C trace context: the run's span must continue it.
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"

CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


async def trace_of(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> dict[str, Any]:
    response = await client.get(f"{RUNS}/{run_id}/trace", headers=auth)
    assert response.status_code == 200, response.text
    trace: dict[str, Any] = response.json()
    return trace


def root_received(run_id: str) -> Any:
    """A predicate: the run's own span arrived (it is sent last, with the run's end)."""
    return lambda spans: any(s.attributes.get("atrium.run.id") == run_id for s in spans)


def by_name(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return sorted((s for s in spans if s.name == name), key=lambda s: s.start_ns)


def same_spans(received: list[ReceivedSpan], shown: list[dict[str, Any]]) -> None:
    """The collector got exactly the spans the trace endpoint shows, once each."""
    ids = [s.span_id for s in received]
    assert len(ids) == len(set(ids)), "a span was sent twice"
    assert {s.span_id: (s.name, s.parent_span_id) for s in received} == {
        s["span_id"]: (s["name"], s["parent_span_id"] or "") for s in shown
    }
    shown_by_id = {s["span_id"]: s for s in shown}
    for span in received:
        assert span.attributes == shown_by_id[span.span_id]["attributes"]
