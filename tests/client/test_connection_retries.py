"""A call whose connection is closed before its answer is sent again when that is safe.

A loopback proxy stands between the client and the real server. Its first connections are
closed after the request is read, as a server closes a keep-alive connection that it found idle
just as the client reuses it: either before the server sees the request (`drops`), or after the
server has processed it and answered (`swallows`: the answer is lost on the way). Later
connections are forwarded both ways.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from pathlib import Path

import pytest

from atrium.client import APIConnectionError, AsyncClient, Client
from tests.client.conftest import Server

_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)", re.IGNORECASE)


async def _message(reader: asyncio.StreamReader) -> bytes:
    """One HTTP/1.1 message (head and a Content-Length body), as it arrived."""
    head = await reader.readuntil(b"\r\n\r\n")
    found = _CONTENT_LENGTH.search(head)
    body = await reader.readexactly(int(found.group(1))) if found else b""
    return head + body


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with suppress(ConnectionError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    sink.close()


class ClosingProxy:
    """Closes its first `drops` connections after reading a request and its next `swallows`
    after forwarding one and reading the server's answer; forwards the rest."""

    def __init__(self, upstream_port: int, *, drops: int = 0, swallows: int = 0) -> None:
        self.upstream_port = upstream_port
        self.drops = drops
        self.swallows = swallows
        self.connections = 0
        self.requests: list[bytes] = []
        self.url = ""
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        closing = [writer]
        try:
            if number <= self.drops:
                self.requests.append(await _message(reader))
                return
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.upstream_port
            )
            closing.append(upstream_writer)
            if number <= self.drops + self.swallows:
                request = await _message(reader)
                self.requests.append(request)
                upstream_writer.write(request)
                await upstream_writer.drain()
                await _message(upstream_reader)
                return
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        finally:
            for side in closing:
                side.close()
                with suppress(ConnectionError):
                    await side.wait_closed()


OpenProxy = Callable[..., Awaitable[ClosingProxy]]


@pytest.fixture
async def open_proxy(server: Server) -> AsyncIterator[OpenProxy]:
    """Start a `ClosingProxy(drops=…, swallows=…)` in front of the session's server."""
    opened: list[ClosingProxy] = []

    async def start(*, drops: int = 0, swallows: int = 0) -> ClosingProxy:
        proxy = ClosingProxy(server.port, drops=drops, swallows=swallows)
        opened.append(proxy)
        await proxy.start()
        return proxy

    yield start
    for proxy in opened:
        await proxy.close()


async def test_a_get_is_sent_again_after_a_dropped_connection(
    open_proxy: OpenProxy, api_key: str
) -> None:
    proxy = await open_proxy(drops=1)
    async with AsyncClient(proxy.url, api_key) as client:
        account = await client.account()
    assert account.key.tier == "standard"
    assert proxy.connections == 2


@pytest.mark.parametrize(
    "lost",
    [
        pytest.param({"drops": 1}, id="request-dropped"),
        # The server created the run; the retry carries the same drawn key and gets that run.
        pytest.param({"swallows": 1}, id="answer-lost"),
    ],
)
async def test_a_run_created_without_a_key_is_made_once_through_a_lost_connection(
    open_proxy: OpenProxy, api_key: str, lost: dict[str, int]
) -> None:
    proxy = await open_proxy(**lost)
    async with AsyncClient(proxy.url, api_key) as client:
        run = await client.runs.create("Once, through a lost connection")
        runs = (await client.runs.list()).data
    assert [listed.run_id for listed in runs] == [run.run_id]
    assert proxy.connections == 2
    assert b"idempotency-key: atrium-client-" in proxy.requests[0].lower()


async def test_a_post_without_a_key_is_not_sent_again(
    open_proxy: OpenProxy, server: Server, api_key: str
) -> None:
    """Creating an agent takes no Idempotency-Key: the server may have made it, so the client
    raises rather than risk a second agent."""
    proxy = await open_proxy(swallows=1)
    async with AsyncClient(proxy.url, api_key, connection_retries=2) as client:
        with pytest.raises(APIConnectionError):
            await client.agents.create("made once")
    assert proxy.connections == 1
    async with AsyncClient(server.url, api_key) as direct:
        assert [agent.name for agent in await direct.agents.list()].count("made once") == 1


async def test_no_retry_with_connection_retries_zero(open_proxy: OpenProxy, api_key: str) -> None:
    proxy = await open_proxy(drops=1)
    async with AsyncClient(proxy.url, api_key, connection_retries=0) as client:
        with pytest.raises(APIConnectionError):
            await client.account()
    assert proxy.connections == 1


async def test_the_retries_are_spent_then_the_error_is_raised(
    open_proxy: OpenProxy, api_key: str
) -> None:
    proxy = await open_proxy(drops=3)
    async with AsyncClient(proxy.url, api_key, connection_retries=2) as client:
        with pytest.raises(APIConnectionError, match=r"sent 3 times"):
            await client.account()
    assert proxy.connections == 3


async def test_a_streamed_download_is_opened_again(
    open_proxy: OpenProxy, server: Server, api_key: str, tmp_path: Path
) -> None:
    source = tmp_path / "notes.txt"
    source.write_text("kept\n")
    async with AsyncClient(server.url, api_key) as direct:
        uploaded = await direct.files.upload(source)
    proxy = await open_proxy(drops=1)
    async with AsyncClient(proxy.url, api_key) as client:
        saved = await client.files.download(uploaded.file_id, to=tmp_path / "out")
    assert saved.read_text() == "kept\n"
    assert proxy.connections == 2


async def test_the_blocking_client_sends_again_too(open_proxy: OpenProxy, api_key: str) -> None:
    proxy = await open_proxy(drops=1)

    def create() -> tuple[str, list[str]]:
        with Client(proxy.url, api_key) as client:
            run = client.runs.create("Once, from the blocking client")
            return run.run_id, [listed.run_id for listed in client.runs.list().data]

    run_id, listed = await asyncio.to_thread(create)
    assert listed == [run_id]
    assert proxy.connections == 2
