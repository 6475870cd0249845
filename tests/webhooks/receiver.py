"""A webhook receiver on loopback for the tests: records every request, answers as scripted.

It runs its own threads (the standard library's HTTP server), so it keeps answering whatever
the test's event loop is doing, and it can be started on a port chosen before it listens (a
server that is "down" refuses connections on it). Signatures are checked with the independent
Standard Webhooks implementation (`standardwebhooks`), never with atrium's own code.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook

from tests.processes import free_port


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]

    def json(self) -> Any:
        return json.loads(self.body)


# A behaviour: an HTTP status, ("redirect", location), ("sleep", seconds) then 200, or
# ("answer", (status, body bytes)).
Behaviour = int | tuple[str, Any]


class Receiver:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.received: list[Received] = []
        self.script: dict[str, list[Behaviour]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.received.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    queue = receiver.script.get(self.path) or []
                    behaviour: Behaviour = queue.pop(0) if queue else 200
                if isinstance(behaviour, tuple) and behaviour[0] == "sleep":
                    time.sleep(float(behaviour[1]))
                    behaviour = 200
                if isinstance(behaviour, tuple) and behaviour[0] == "redirect":
                    self.send_response(302)
                    self.send_header("Location", str(behaviour[1]))
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if isinstance(behaviour, tuple) and behaviour[0] == "answer":
                    behaviour, answer = behaviour[1]
                else:
                    assert isinstance(behaviour, int)
                    answer = b"ok" if behaviour < 400 else b"receiver says no\n" + b"x" * 5000
                try:
                    self.send_response(behaviour)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:  # the sender gave up (timeout) and closed the connection
                    pass

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [item for item in self.received if item.path == path]

    def distinct(self, path: str) -> list[Received]:
        """The first attempt of each delivery to `path`: delivery is at least once, and a retry
        (the first attempt's answer came too late, say on a loaded machine) carries the same
        `webhook-id`."""
        seen: set[str] = set()
        first = []
        for item in self.at(path):
            if item.webhook_id not in seen:
                seen.add(item.webhook_id)
                first.append(item)
        return first

    async def wait_for(self, path: str, count: int, within: float = 20.0) -> list[Received]:
        return await self._wait(path, self.at, count, within)

    async def wait_for_distinct(
        self, path: str, count: int, within: float = 20.0
    ) -> list[Received]:
        """`count` distinct deliveries to `path` (`distinct`), waited for."""
        return await self._wait(path, self.distinct, count, within)

    async def _wait(
        self, path: str, items: Callable[[str], list[Received]], count: int, within: float
    ) -> list[Received]:
        deadline = time.monotonic() + within
        while len(items(path)) < count:
            assert time.monotonic() < deadline, (path, count, self.received)
            await asyncio.sleep(0.02)
        return items(path)


def verify(secret: str, item: Received) -> Any:
    """The payload when the request carries a valid Standard Webhooks signature (else raises)."""
    return Webhook(secret).verify(item.body, item.headers)
