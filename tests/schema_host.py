"""A loopback HTTP server that serves a JSON Schema at every path and records what was asked:
the tests of schemas that must never be fetched expect no hit."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from typing import Any

import pytest


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/schema+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        pass


class SchemaHost:
    """A loopback HTTP server, in a thread of its own (a fetch made on the event loop blocks
    it), that serves a schema at every path and records the paths asked for."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        handler = type("Handler", (_Recorder,), {"hits": self.hits})
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def schema_host() -> Iterator[SchemaHost]:
    host = SchemaHost()
    yield host
    host.close()
