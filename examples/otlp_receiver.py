"""A small OTLP/HTTP trace receiver to try atrium's traces with (docs/guide/traces.md).

    python examples/otlp_receiver.py [--port 4318]

It listens on http://127.0.0.1:4318/v1/traces, where an OpenTelemetry Collector's OTLP/HTTP
receiver listens, decodes each export (protobuf) and prints one line per span:

    invoke_agent agt_…  trace 4bf92f35…  parent 00f067aa0ba902b7  1234.5 ms  ok
        gen_ai.request.model=atrium:offline gen_ai.usage.input_tokens=100 …

Point atrium at it with `ATRIUM_OTLP_ENDPOINT=http://127.0.0.1:4318`. It needs
`opentelemetry-proto` (installed with atrium); in production run a real collector instead.
"""

from __future__ import annotations

import argparse
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

STATUS = {0: "unset", 1: "ok", 2: "error"}


def value(any_value: AnyValue) -> object:
    kind = any_value.WhichOneof("value")
    return None if kind is None else getattr(any_value, kind)


def describe(request: ExportTraceServiceRequest) -> list[str]:
    lines = []
    for resource_spans in request.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                millis = (span.end_time_unix_nano - span.start_time_unix_nano) / 1e6
                parent = span.parent_span_id.hex() or "-"
                lines.append(
                    f"{span.name}  trace {span.trace_id.hex()}  span {span.span_id.hex()}  "
                    f"parent {parent}  {millis:.1f} ms  {STATUS[span.status.code]}"
                )
                attributes = " ".join(f"{a.key}={value(a.value)}" for a in span.attributes)
                links = " ".join(f"link={link.span_id.hex()}" for link in span.links)
                lines.append(f"    {attributes} {links}".rstrip())
    return lines


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path != "/v1/traces":
            self.send_error(HTTPStatus.NOT_FOUND)
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        for line in describe(request):
            print(line, flush=True)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per span is enough


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=4318)
    port = parser.parse_args().port
    server = HTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{port}/v1/traces", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
