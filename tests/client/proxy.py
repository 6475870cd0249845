"""A loopback TCP proxy that drops event streams on purpose.

It forwards bytes both ways. For the first `drops` `/events` requests, the response is cut in the
middle of its frame number `after + 1` (so the client has `after` whole events and a torn one)
and both sockets are closed, as a flaky network or a restarting balancer would do; with
`stall=True` the connection is left open but silent instead (a half-open connection: no bytes,
no close, not even heartbeats), which only a read timeout can detect.
Every `/events` request's `Last-Event-ID` header is recorded.
"""

from __future__ import annotations

import re
import socket
import threading
from contextlib import suppress

_LAST_EVENT_ID = re.compile(rb"\r\nlast-event-id: *([^\r\n]*)", re.IGNORECASE)
_EVENTS_REQUEST = re.compile(rb"^GET [^ ]*/events[ ?]", re.MULTILINE)


class DroppingProxy:
    def __init__(
        self, upstream_port: int, *, after: int, drops: int = 1, stall: bool = False
    ) -> None:
        self.upstream_port = upstream_port
        self.after = after
        self.drops = drops
        self.stall = stall
        self.dropped = 0
        self.last_event_ids: list[str | None] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._closed = True
        with suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                downstream, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            link = _Link(self, downstream, upstream)
            threading.Thread(target=link.requests, daemon=True).start()
            threading.Thread(target=link.responses, daemon=True).start()


class _Link:
    """One client connection and its upstream connection."""

    def __init__(self, proxy: DroppingProxy, downstream: socket.socket, up: socket.socket) -> None:
        self.proxy = proxy
        self.downstream = downstream
        self.upstream = up
        self.armed = False
        self.frames = 0

    def close(self) -> None:
        for sock in (self.downstream, self.upstream):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with suppress(OSError):
                sock.close()

    def requests(self) -> None:
        try:
            while data := self.downstream.recv(65536):
                if _EVENTS_REQUEST.search(data):
                    found = _LAST_EVENT_ID.search(data)
                    with self.proxy._lock:
                        self.proxy.last_event_ids.append(found.group(1).decode() if found else None)
                        if self.proxy.dropped < self.proxy.drops:
                            self.armed, self.frames = True, 0
                self.upstream.sendall(data)
        except OSError:
            pass
        self.close()

    def responses(self) -> None:
        try:
            while data := self.upstream.recv(65536):
                if self.armed:
                    cut = self._cut_position(data)
                    if cut is not None:
                        self.downstream.sendall(data[:cut])
                        with self.proxy._lock:
                            self.proxy.dropped += 1
                        self.armed = False
                        if self.proxy.stall:
                            while self.upstream.recv(65536):
                                pass  # swallow the rest until the client gives up
                        break
                self.downstream.sendall(data)
        except OSError:
            pass
        self.close()

    def _cut_position(self, data: bytes) -> int | None:
        """Where frame number `after + 1` starts, plus a few bytes of it; None if not here."""
        start = 0
        while (found := data.find(b"\nid: ", start)) != -1:
            self.frames += 1
            if self.frames == self.proxy.after + 1:
                return found + 7
            start = found + 5
        return None
