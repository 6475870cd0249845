"""A real OTLP/HTTP trace receiver on loopback: it decodes each `ExportTraceServiceRequest`
(protobuf, `opentelemetry-proto`) the way a collector does and keeps the spans.

`with OtlpReceiver() as receiver:` serves at `receiver.endpoint` (the base URL atrium's
`ATRIUM_OTLP_ENDPOINT` takes; spans arrive at `/v1/traces`) from a thread of its own, so the
atrium processes of a test and its own event loop can both reach it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.loopback import LoopbackServer


@dataclass(frozen=True)
class ReceivedSpan:
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    links: list[tuple[str, str]]
    status_code: int  # 0 unset, 1 ok, 2 error
    events: list[str]
    service_name: str


@dataclass
class OtlpReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    content_types: list[str] = field(default_factory=list)
    # Answer this many exports with a 500 (a collector that is down), keeping nothing of them.
    refuse: int = 0
    refused: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._app, lifespan="off", interface="asgi3")

    @property
    def endpoint(self) -> str:
        return self._server.url

    def __enter__(self) -> OtlpReceiver:
        self._server.__enter__()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.__exit__()

    def of_trace(self, trace_id: str) -> list[ReceivedSpan]:
        with self._lock:
            return [span for span in self.spans if span.trace_id == trace_id]

    def wait_for(self, predicate: Any, within: float = 20.0) -> list[ReceivedSpan]:
        """The spans received once `predicate(spans)` holds (polled)."""
        deadline = time.monotonic() + within
        while True:
            with self._lock:
                spans = list(self.spans)
            if predicate(spans):
                return spans
            assert time.monotonic() < deadline, f"{len(spans)} spans: {[s.name for s in spans]}"
            time.sleep(0.05)

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] != "POST" or scope["path"] != "/v1/traces":
            await _answer(send, 404, b"", "text/plain")
            return
        with self._lock:
            refusing = self.refuse > 0
            if refusing:
                self.refuse -= 1
                self.refused += 1
        if refusing:
            await _answer(send, 500, b"collector down", "text/plain")
            return
        headers = dict(scope["headers"])
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self._lock:
            self.requests += 1
            self.content_types.append(headers.get(b"content-type", b"").decode())
            self.spans.extend(_decoded(request))
        await _answer(
            send, 200, ExportTraceServiceResponse().SerializeToString(), "application/x-protobuf"
        )


async def _answer(send: Any, status: int, body: bytes, content_type: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _decoded(request: ExportTraceServiceRequest) -> list[ReceivedSpan]:
    spans: list[ReceivedSpan] = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    ReceivedSpan(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=span.kind,
                        start_ns=span.start_time_unix_nano,
                        end_ns=span.end_time_unix_nano,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                        status_code=span.status.code,
                        events=[event.name for event in span.events],
                        service_name=str(resource.get("service.name", "")),
                    )
                )
    return spans


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)
