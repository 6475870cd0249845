"""A web server on 127.0.0.1 for image URLs of a run's input: each path answers what the test
put there (status, headers, body); `requests` lists the paths asked for. With the test DNS
server (`tests.dns_server`) a name of the test's points at it; no public address is ever
contacted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Answer:
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class ImageHost:
    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                host.requests.append((self.path, dict(self.headers)))
                answer = host.answers.get(self.path, Answer(b"not here", 404))
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *_args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.port = self._http.server_address[1]
        threading.Thread(target=self._http.serve_forever, daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


@pytest.fixture
def image_host() -> Iterator[ImageHost]:
    host = ImageHost()
    yield host
    host.stop()
