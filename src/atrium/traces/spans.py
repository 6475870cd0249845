"""A run's spans, built from its row and its stored events only.

Both the OTLP export and the trace endpoint call `build_spans`, so the collector and the
dashboard show the same spans. Following the OpenTelemetry GenAI semantic conventions:

    invoke_agent {agent_id}            the run, from its creation to its terminal event
    ├─ execute | retry                 one stretch of execution (a claim until it ends, waits
    │  │                               or loses its worker); a retry links the attempt it
    │  │                               takes over from
    │  ├─ chat {model}                 one model request
    │  └─ execute_tool {name}          one tool call, from `tool.called` to `tool.returned`
    └─ wait                            `requires_action` until answered, cancelled or expired

Times are the events' `created_at`: a model request ends at the first event after it that is
not its streamed text. Each span records the sequence number of the event that closed it
(`closed_seq`), so an export sends exactly the spans closed since the previous one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from atrium.traces.context import derived_id, parsed_traceparent

AttributeValue = str | int | float | bool
Attributes = dict[str, AttributeValue]
SpanStatus = Literal["unset", "ok", "error"]
SpanKind = Literal["internal", "client"]

_TERMINAL = {"run.completed", "run.failed", "run.cancelled"}
# Re-queue reasons that end an attempt without its run ending or waiting.
_LOST = {"worker_lost", "shutdown"}


@dataclass(frozen=True, slots=True)
class TracedRun:
    """What the spans say about the run itself (its row)."""

    run_id: str
    thread_id: str
    agent_id: str
    model: str
    status: str
    prompt: str
    result: str | None
    error_code: str | None
    error_message: str | None
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int
    credits_micro: int
    attempts: int
    created_at: datetime
    traceparent: str | None
    # The model's answers stored with the run (pydantic-ai's `ModelResponse`s, in order): each
    # request's tokens and the model that answered, for its `chat` span.
    responses: tuple[ModelAnswer, ...] = ()
    # The number of the agent version whose config the run executed (`runs.agent_version`),
    # as text: the conventions' `gen_ai.agent.version` is a string. None for older runs.
    agent_version: str | None = None
    agent_name: str | None = None


@dataclass(frozen=True, slots=True)
class ModelAnswer:
    input_tokens: int
    output_tokens: int
    model: str | None
    response_id: str | None
    finish_reason: str | None


@dataclass(frozen=True, slots=True)
class TracedEvent:
    seq: int
    kind: str
    data: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SpanLink:
    trace_id: str
    span_id: str
    attributes: Attributes


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time: datetime
    attributes: Attributes


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    # None for a run without an incoming trace context; else the caller's span (remote).
    parent_span_id: str | None
    name: str
    kind: SpanKind
    start: datetime
    end: datetime | None = None
    attributes: Attributes = field(default_factory=dict)
    status: SpanStatus = "unset"
    status_message: str | None = None
    links: list[SpanLink] = field(default_factory=list)
    events: list[SpanEvent] = field(default_factory=list)
    # The event that ended the span (0 while it is open).
    closed_seq: int = 0

    def close(self, event: TracedEvent) -> None:
        if self.end is None:
            self.end = event.created_at
            self.closed_seq = event.seq

    def fail(self, message: str) -> None:
        self.status, self.status_message = "error", message


def provider_name(model: str) -> str:
    """`gen_ai.provider.name`: the part of atrium's model name before its colon."""
    prefix, _, _ = model.partition(":")
    return prefix


def build_spans(run: TracedRun, events: list[TracedEvent], *, content: bool) -> list[Span]:
    """The run's spans, parents before children (open ones have `end` None). With `content`
    the prompt, the answers and the tools' arguments and outputs are attributes too."""
    return _Builder(run, content=content).build(events)


class _Builder:
    def __init__(self, run: TracedRun, *, content: bool) -> None:
        self.run = run
        self.content = content
        parent = parsed_traceparent(run.traceparent)
        self.trace_id = (
            parent.trace_id
            if parent is not None
            else derived_id("trace", run.run_id, hex_digits=32)
        )
        self.spans: list[Span] = []
        self.root = self._span(
            "run",
            name=f"invoke_agent {run.agent_id}",
            parent=None if parent is None else parent.parent_id,
            start=run.created_at,
            attributes=self._run_attributes(),
        )
        self.attempt: Span | None = None
        self.lost_attempt: Span | None = None
        # Attempts ended by a lost worker or a shutdown: their answers were never stored.
        self.lost_attempts: set[str] = set()
        self.chat: Span | None = None
        self.chat_text: list[str] = []
        self.wait: Span | None = None
        self.tools: dict[str, Span] = {}

    def build(self, events: list[TracedEvent]) -> list[Span]:
        for event in events:
            handler = getattr(self, "_on_" + event.kind.replace(".", "_"), None)
            if handler is not None:
                handler(event)
        self._answers()
        return self.spans

    def _answers(self) -> None:
        """Each finished request's own tokens on its `chat` span. The stored answers are those
        of the attempts that counted (a lost attempt's are gone with it): they match the
        requests of the other attempts in order, and are left out when the counts differ (an
        unfinished request, a run cut off mid-answer) rather than put on the wrong span."""
        chats = [
            span
            for span in self.spans
            if span.kind == "client"
            and span.parent_span_id not in self.lost_attempts
            and span.status != "error"
        ]
        if len(chats) != len(self.run.responses):
            return
        for span, answer in zip(chats, self.run.responses, strict=True):
            span.attributes["gen_ai.usage.input_tokens"] = answer.input_tokens
            span.attributes["gen_ai.usage.output_tokens"] = answer.output_tokens
            if answer.model:
                span.attributes["gen_ai.response.model"] = answer.model
            if answer.response_id:
                span.attributes["gen_ai.response.id"] = answer.response_id
            if answer.finish_reason:
                span.attributes["gen_ai.response.finish_reasons"] = answer.finish_reason

    # --- events ---------------------------------------------------------------------------------
    def _on_run_queued(self, event: TracedEvent) -> None:
        reason = event.data.get("reason")
        if reason in _LOST and self.attempt is not None:
            self._end_attempt(event, outcome=str(reason))
            self.lost_attempts.add(self.attempt.span_id)
            if reason == "worker_lost":
                self.lost_attempt = self.attempt
                self.lost_attempt.fail("worker lost")
            self.attempt = None
        elif self.wait is not None:
            self.wait.attributes["atrium.wait.outcome"] = "answered"
            self.wait.close(event)
            self.wait = None

    def _on_run_started(self, event: TracedEvent) -> None:
        number = int(event.data.get("attempt", 1))
        retry = self.lost_attempt
        self.attempt = self._span(
            f"attempt:{event.seq}",
            name="retry" if retry is not None else "execute",
            parent=self.root.span_id,
            start=event.created_at,
            attributes={"atrium.attempt": number},
        )
        if retry is not None:
            self.attempt.links.append(
                SpanLink(self.trace_id, retry.span_id, {"atrium.link": "retry_of"})
            )
            self.lost_attempt = None

    def _on_run_step(self, event: TracedEvent) -> None:
        self._end_chat(event)
        if event.data.get("step") != "model_request":
            return
        index = event.data.get("index")
        self.chat = self._span(
            f"chat:{event.seq}",
            name=f"chat {self.run.model}",
            parent=self._current_parent(),
            kind="client",
            start=event.created_at,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": provider_name(self.run.model),
                "gen_ai.request.model": self.run.model,
                **({"atrium.request.index": index} if isinstance(index, int) else {}),
            },
        )
        self.chat_text = []

    def _on_message_delta(self, event: TracedEvent) -> None:
        if self.chat is not None and self.content:
            self.chat_text.append(str(event.data.get("text", "")))

    def _on_tool_called(self, event: TracedEvent) -> None:
        self._end_chat(event)
        call_id = str(event.data.get("tool_call_id", ""))
        name = str(event.data.get("name", ""))
        server = event.data.get("server_label")
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            # MCP tools run in a server of the agent's; function tools in the caller's program.
            "gen_ai.tool.type": "extension" if server else "function",
        }
        if server:
            attributes["atrium.tool.server_label"] = str(server)
        if self.content:
            attributes["gen_ai.tool.call.arguments"] = _json(event.data.get("arguments"))
        self.tools[call_id] = self._span(
            f"tool:{call_id}:{event.seq}",
            name=f"execute_tool {name}",
            parent=self._current_parent(),
            start=event.created_at,
            attributes=attributes,
        )

    def _on_tool_returned(self, event: TracedEvent) -> None:
        self._end_chat(event)
        span = self.tools.pop(str(event.data.get("tool_call_id", "")), None)
        if span is None:
            return
        if event.data.get("is_error"):
            span.fail("the tool returned an error")
        if self.content:
            span.attributes["gen_ai.tool.call.result"] = _json(event.data.get("output"))
        span.close(event)

    def _on_artifact_created(self, event: TracedEvent) -> None:
        parent = self.attempt or self.root
        parent.events.append(
            SpanEvent(
                "artifact.created",
                event.created_at,
                {
                    "atrium.artifact.name": str(event.data.get("name", "")),
                    "atrium.artifact.size_bytes": int(event.data.get("size_bytes", 0)),
                },
            )
        )

    def _on_run_requires_action(self, event: TracedEvent) -> None:
        self._end_chat(event)
        self._end_attempt(event, outcome="requires_action")
        self.attempt = None
        action = event.data.get("required_action") or {}
        calls = action.get("tool_calls") or [] if isinstance(action, dict) else []
        self.wait = self._span(
            f"wait:{event.seq}",
            name="wait",
            parent=self.root.span_id,
            start=event.created_at,
            attributes={
                "atrium.wait.tool_calls": len(calls),
                "atrium.wait.tools": ",".join(str(call.get("name", "")) for call in calls),
            },
        )

    def _on_run_completed(self, event: TracedEvent) -> None:
        self._end_run(event)

    def _on_run_failed(self, event: TracedEvent) -> None:
        self._end_run(event)

    def _on_run_cancelled(self, event: TracedEvent) -> None:
        self._end_run(event)

    # --- helpers --------------------------------------------------------------------------------
    def _end_run(self, event: TracedEvent) -> None:
        failed = event.kind == "run.failed"
        self._end_chat(event, failed=failed)
        for span in self.tools.values():
            span.fail("the run ended before the tool returned")
            span.close(event)
        self.tools.clear()
        if self.wait is not None:
            self.wait.attributes["atrium.wait.outcome"] = event.data.get("status", "ended")
            self.wait.close(event)
            self.wait = None
        self._end_attempt(event, outcome=str(event.data.get("status", "")))
        if failed:
            error = event.data.get("error") or {}
            code = str(error.get("code") or self.run.error_code or "INTERNAL_ERROR")
            self.root.attributes["error.type"] = code
            self.root.fail(str(error.get("message") or self.run.error_message or code))
            if self.attempt is not None:
                self.attempt.fail(code)
        elif event.kind == "run.completed":
            self.root.status = "ok"
        self.attempt = None
        self.root.close(event)

    def _end_chat(self, event: TracedEvent, *, failed: bool = False) -> None:
        if self.chat is None:
            return
        if self.content and self.chat_text:
            self.chat.attributes["gen_ai.output.messages"] = _messages(
                "assistant", "".join(self.chat_text)
            )
        if failed:
            self.chat.fail("the run failed during the request")
        self.chat.close(event)
        self.chat = None

    def _end_attempt(self, event: TracedEvent, *, outcome: str) -> None:
        if event.kind not in _TERMINAL:
            self._end_chat(event, failed=outcome == "worker_lost")
        if self.attempt is None:
            return
        self.attempt.attributes["atrium.attempt.outcome"] = outcome
        self.attempt.close(event)

    def _current_parent(self) -> str:
        return (self.attempt or self.root).span_id

    def _span(
        self,
        key: str,
        *,
        name: str,
        parent: str | None,
        start: datetime,
        attributes: Attributes,
        kind: SpanKind = "internal",
    ) -> Span:
        span = Span(
            trace_id=self.trace_id,
            span_id=derived_id("span", self.run.run_id, key, hex_digits=16),
            parent_span_id=parent,
            name=name,
            kind=kind,
            start=start,
            attributes=attributes,
        )
        self.spans.append(span)
        return span

    def _run_attributes(self) -> Attributes:
        run = self.run
        attributes: Attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": run.agent_id,
            "gen_ai.provider.name": provider_name(run.model),
            "gen_ai.request.model": run.model,
            "gen_ai.conversation.id": run.thread_id,
            "gen_ai.usage.input_tokens": run.input_tokens,
            "gen_ai.usage.output_tokens": run.output_tokens,
            "atrium.run.id": run.run_id,
            "atrium.run.status": run.status,
            "atrium.run.attempts": run.attempts,
            "atrium.run.requests": run.requests,
            "atrium.run.tool_calls": run.tool_calls,
            "atrium.credits": run.credits_micro / 1_000_000,
        }
        if run.agent_name is not None:
            attributes["gen_ai.agent.name"] = run.agent_name
        if run.agent_version is not None:
            attributes["gen_ai.agent.version"] = run.agent_version
        if self.content:
            attributes["gen_ai.input.messages"] = _messages("user", run.prompt)
            if run.result is not None:
                attributes["gen_ai.output.messages"] = _messages("assistant", run.result)
        return attributes


def _messages(role: str, text: str) -> str:
    """One message in the conventions' `gen_ai.*.messages` JSON form."""
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
