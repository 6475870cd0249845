"""uvicorn's HTTP/1.1 protocol with a bound on the size of a request's head and on its read time.

uvicorn bounds neither with its httptools parser (its h11 parser has a size bound only, and is
slower). Unbounded, four connections each sending 50 MB of never-ending headers grow the
process by 195 MB, since httptools keeps a header until it ends, and a connection sending one
header byte a second, or nothing, stays open as long as it likes
(docs/decisions/0024-bounded-request-heads.md). A subclass is the small way in: uvicorn passes
every received chunk through `data_received` and reports the end of a head through the
parser's `on_headers_complete` callback, which is all the bounds need.

- Size: the request line and headers may take `max_head_bytes`; the next byte is answered
  431 and the connection is closed. Exact for every request but pipelined ones, where the
  part of the next head that arrives with the end of the previous request in one read
  (at most 256 KiB) is not counted.
- Time: a head must be complete within `head_timeout` seconds of the connection opening, or of
  the first byte of the next request on a kept-alive connection (the wait between requests is
  uvicorn's keep-alive timeout); otherwise 408 and the connection is closed. The server's own
  lag never counts against a client: a head that arrived in time but was not read yet (uvloop
  runs due timers before it reads sockets, and a starved loop can lag past the timeout) is
  read before the timer may refuse it: otherwise 1,000 streams opened at once on a loaded
  machine are answered 408 with their whole requests waiting in the socket.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from atrium.settings import Settings


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol` that refuses request heads over a size or a read time."""

    max_head_bytes: ClassVar[int] = 65_536
    head_timeout: ClassVar[float] = 10.0

    _reading_head = True  # from the connection's start, and again after each request
    _head_begun = False  # a byte of the current request's head has been parsed
    _head_bytes = 0
    _head_timer: asyncio.TimerHandle | None = None
    _head_deadline_passed = False  # the timer fired once; the socket is read before it counts

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        while self._reading_head and data:
            room = self.max_head_bytes - self._head_bytes
            if room <= 0:
                self._refuse(431, "Request header fields too large.")
                return
            # Only what the head may still take goes to the parser; the rest follows once the
            # head has ended in it (a body, or the next request).
            piece, data = data[:room], data[room:]
            self._head_bytes += len(piece)
            super().data_received(piece)
            if self.transport.is_closing() or self.transport.get_protocol() is not self:
                return  # refused, or handed over to the WebSocket protocol
            if self._head_begun and self._head_timer is None:
                # A head that did not arrive whole: it has `head_timeout` from now. (A whole one,
                # the usual case, costs no timer.)
                self._start_head_timer()
        if data:
            super().data_received(data)

    def on_message_begin(self) -> None:
        self._head_begun = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._reading_head = self._head_begun = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_head = True
        self._head_bytes = 0

    def _start_head_timer(self) -> None:
        self._head_deadline_passed = False
        self._head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        if not self._head_deadline_passed:
            # One more short wait, so the loop polls the sockets at least once before the
            # refusal: bytes that arrived in time are parsed first. (A timer of no delay is not
            # enough: uvloop may run it as a ready callback, ahead of this turn's poll.)
            self._head_deadline_passed = True
            self._head_timer = self.loop.call_later(0.05, self._head_timed_out)
            return
        self._head_timer = None
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head arriving slowly while a response is sent: an answer now would
            # land inside that response.
            self.transport.close()
        else:
            self._refuse(408, "Request header timeout.")

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` with `message` and close, as uvicorn answers a malformed request."""
        self._stop_head_timer()
        if self.transport.is_closing():
            return
        self.logger.warning("%s (%d)", message, status)
        body = message.encode("ascii")
        content = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: text/plain; charset=utf-8\r\n",
                b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                body,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()


def http_protocol(settings: Settings) -> type[BoundedHttpToolsProtocol]:
    """The protocol class `atrium serve` gives uvicorn, bounded by the settings."""

    class ConfiguredHttpToolsProtocol(BoundedHttpToolsProtocol):
        max_head_bytes = settings.http_max_header_bytes
        head_timeout = settings.http_header_timeout_seconds

    return ConfiguredHttpToolsProtocol
