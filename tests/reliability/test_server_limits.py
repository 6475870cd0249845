"""A real `atrium serve` (and `serve --no-worker`, the scale-out API process) bounds request heads.

Unbounded, four connections each sending 50 MB of never-ending headers grow a server by
195 MB, and a connection trickling a header byte a second stays open for as long as it likes
(docs/decisions/0024-bounded-request-heads.md). A head over `ATRIUM_HTTP_MAX_HEADER_BYTES` is
answered 431 and one slower than `ATRIUM_HTTP_HEADER_TIMEOUT_SECONDS` 408, and the connection
is closed either way; ordinary, big-but-allowed, slow-but-in-time and kept-alive requests work.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.processes import (
    Process,
    atrium_env,
    free_port,
    start_atrium,
    stop_process,
    wait_for_http,
)

HEAD_TIMEOUT = 3.0  # below uvicorn's keep-alive timeout (5 s), so both can be told apart
# Closing can be late by the server's event-loop lag on a busy 2-core machine.
CLOSE_SLACK = 3.0
MAX_HEAD = 65_536
ATTACK_BYTES = 50 * 2**20
CONNECTIONS = 4


@dataclass
class Server:
    port: int
    process: Process
    log: Path

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        [line] = [line for line in status.splitlines() if line.startswith("VmRSS:")]
        return int(line.split()[1]) / 1024

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)


@pytest.fixture(scope="module", params=[(), ("--no-worker",)], ids=["serve", "serve-no-worker"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("limits")
    port = free_port()
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY="atr_" + secrets.token_urlsafe(32),
        ATRIUM_HTTP_HEADER_TIMEOUT_SECONDS=str(HEAD_TIMEOUT),
        PYTHONUNBUFFERED="1",
    )
    log = tmp / "serve.log"
    log.write_text("")
    process = start_atrium(["serve", *request.param, "--port", str(port)], env=env, output=log)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", process=process, log=log)
        yield Server(port, process, log)
    finally:
        stop_process(process)


def _read_until_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection ("" if it never does)."""
    sock.settimeout(timeout)
    received = b""
    try:
        while chunk := sock.recv(65_536):
            received += chunk
    except TimeoutError:
        return b""  # still open: not what a bounded server does
    except ConnectionResetError:
        pass  # closed with our unread bytes in its buffer: a reset after the answer
    return received


def _flood_headers(server: Server) -> tuple[bytes, int, socket.socket]:
    """Send one request head that never ends, up to ATTACK_BYTES, until the server answers;
    the connection stays open on this side (the caller closes it)."""
    sock = server.connect()
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ")
    chunk, sent = b"a" * 65_536, 0
    while sent < ATTACK_BYTES and not select.select([sock], [], [], 0)[0]:
        try:
            sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(chunk)
    return _read_until_closed(sock, timeout=15), sent, sock


def _read_response(sock: socket.socket) -> bytes:
    """One response with a Content-Length body."""
    sock.settimeout(15)
    response = b""
    while True:
        head, _, body = response.partition(b"\r\n\r\n")
        if _ and b"content-length: " in head.lower():
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(body) >= length:
                return response
        chunk = sock.recv(65_536)
        assert chunk, f"closed after {response!r}"
        response += chunk


def _get(sock: socket.socket, extra: bytes = b"") -> bytes:
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + b"\r\n")
    return _read_response(sock)


def test_oversized_heads_are_refused_without_memory_growth(server: Server) -> None:
    _flood_headers(server)[2].close()  # warm-up: a refusal's one-time allocations (logging, …)
    before = server.rss_mib()
    with ThreadPoolExecutor(CONNECTIONS) as pool:
        results = list(pool.map(lambda _: _flood_headers(server), range(CONNECTIONS)))
    # Measured while this side still holds every connection open: an unbounded server still
    # holds what it was sent (it frees it when the connection ends).
    growth = server.rss_mib() - before
    for _, _, sock in results:
        sock.close()
    print(f"RSS {before:.1f} MiB -> +{growth:.2f} MiB; bytes sent per connection {results[0][1]}")
    for response, sent, _ in results:
        assert response.startswith(b"HTTP/1.1 431 "), (response[:200], sent)
        assert b"connection: close" in response.lower()
    assert growth < 5, f"RSS grew {growth:.1f} MiB"
    with server.connect() as sock:  # the server still serves
        assert _get(sock).startswith(b"HTTP/1.1 200 ")


def test_a_trickled_head_is_closed_after_the_timeout(server: Server) -> None:
    with server.connect() as sock:
        started = time.monotonic()
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        response = b""
        while time.monotonic() - started < HEAD_TIMEOUT + CLOSE_SLACK + 5:
            if select.select([sock], [], [], 1.0)[0]:  # one byte a second until it answers
                response = _read_until_closed(sock, timeout=5)
                break
            try:
                sock.sendall(b"a")
            except (BrokenPipeError, ConnectionResetError):
                break
        closed_after = time.monotonic() - started
    print(f"trickled head closed after {closed_after:.2f} s (timeout {HEAD_TIMEOUT} s)")
    assert response.startswith(b"HTTP/1.1 408 "), response
    assert HEAD_TIMEOUT - 0.5 <= closed_after <= HEAD_TIMEOUT + CLOSE_SLACK


def test_a_silent_connection_is_closed_after_the_timeout(server: Server) -> None:
    with server.connect() as sock:
        started = time.monotonic()
        response = _read_until_closed(sock, timeout=HEAD_TIMEOUT + CLOSE_SLACK)
        closed_after = time.monotonic() - started
    print(f"silent connection closed after {closed_after:.2f} s")
    assert response.startswith(b"HTTP/1.1 408 "), response
    assert closed_after <= HEAD_TIMEOUT + CLOSE_SLACK


def test_a_head_sent_in_time_is_served_however_late_the_server_reads_it(server: Server) -> None:
    """The server's own lag is not the client's: a stalled server (stopped here, as a starved
    one is) reads a head that arrived in time instead of answering 408. Before the fix it
    answered 408 (uvloop runs due timers before it reads the sockets)."""
    with server.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        time.sleep(0.5)  # accepted: the head's timer runs
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            sock.sendall(b"Host: 127.0.0.1\r\n\r\n")
            time.sleep(HEAD_TIMEOUT + 1)  # past the deadline before the server runs again
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert _read_response(sock).startswith(b"HTTP/1.1 200 ")


def test_allowed_heads_slow_heads_and_kept_alive_connections_are_served(server: Server) -> None:
    with server.connect() as sock:
        # A head just under the bound.
        big = b"X-Big: " + b"b" * (MAX_HEAD - 200) + b"\r\n"
        assert _get(sock, extra=big).startswith(b"HTTP/1.1 200 ")
        # Idle longer than the head timeout between requests (uvicorn's keep-alive timeout, 5 s,
        # bounds that wait), then a head sent in parts over most of the head timeout; twice:
        # each request has its own time.
        for _ in range(2):
            time.sleep(HEAD_TIMEOUT + 1)
            for part in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"\r\n"):
                sock.sendall(part)
                time.sleep(HEAD_TIMEOUT * 0.3)
            assert _read_response(sock).startswith(b"HTTP/1.1 200 ")
        # Two pipelined requests in one write.
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" * 2)
        time.sleep(0.5)
        assert sock.recv(65_536).count(b"HTTP/1.1 200 ") == 2
