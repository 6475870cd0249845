"""The SDK client of `openai-compatible:` models talks HTTP through aiohttp (runtime/model_http.py)
with the SDK's behaviour over httpx2: streamed answers read to their end reuse the connection,
one left early closes it, a refused or dropped connection is a connection error, a server that
stops sending is a timeout. Runs over the wire are tested in `test_openai_compatible.py`; here,
the client against loopback servers that misbehave.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from openai import APIConnectionError, APITimeoutError

from atrium.runtime.llm_models import ModelRegistry
from atrium.runtime.model_http import AioHttpClient
from atrium.runtime.openai_client import ValidatingOpenAI
from atrium.settings import Settings
from tests.processes import free_port
from tests.runtime.chat_server import ANSWER, ChatServer

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _client(base_url: str, *, timeout: float = 5.0) -> ValidatingOpenAI:
    return ValidatingOpenAI(
        base_url=base_url,
        api_key="k",
        http_client=AioHttpClient(),
        max_retries=0,
        timeout=timeout,
    )


async def _answer(client: ValidatingOpenAI) -> str:
    stream = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    async with stream:
        return "".join(
            [c.choices[0].delta.content or "" async for c in stream if c.choices]
        ).strip()


async def test_the_registry_builds_its_client_on_aiohttp() -> None:
    settings = Settings(_env_file=None, llm_base_url="http://127.0.0.1:9/v1")  # type: ignore[call-arg]
    registry = ModelRegistry(settings)
    registry.resolve("openai-compatible:m")
    [client] = registry._clients
    assert isinstance(client._client, AioHttpClient)
    await registry.aclose()
    assert client._client.is_closed


async def test_streamed_answers_read_to_their_end_reuse_one_connection() -> None:
    async with ChatServer() as server:
        client = _client(server.base_url)
        async with client:
            assert [await _answer(client) for _ in range(3)] == [ANSWER] * 3
            assert server.connections == 1
        assert len(server.requests) == 3


async def test_a_stream_left_early_closes_its_connection() -> None:
    async with ChatServer(pause=0.1) as server:
        client = _client(server.base_url)
        async with client:
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            )
            async with stream:
                async for _ in stream:
                    break  # the caller leaves after the first chunk
            for _ in range(100):  # the server sees the close a moment later
                if not server.connections:
                    break
                await asyncio.sleep(0.01)
            assert not server.connections
            assert await _answer(client) == ANSWER  # a new connection serves the next


@asynccontextmanager
async def _raw_server(handle: Handler) -> AsyncIterator[str]:
    """A loopback server that reads a request's head and then does what `handle` says."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        try:
            await handle(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()


async def _hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    pass  # closed without an answer


async def _cut_short(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 1000\r\n\r\n"
        b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", '
        b'"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n'
    )
    await writer.drain()


async def _stall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 9\r\n\r\n")
    await writer.drain()
    await asyncio.sleep(5)


async def test_a_refused_connection_is_a_connection_error_not_a_timeout() -> None:
    async with _client(f"http://127.0.0.1:{free_port()}/v1") as client:
        with pytest.raises(APIConnectionError) as raised:
            await _answer(client)
    assert not isinstance(raised.value, APITimeoutError)
    assert raised.value.message == "Connection error."


@pytest.mark.parametrize("handle", [_hang_up, _cut_short], ids=["before", "during the answer"])
async def test_a_server_hanging_up_is_a_connection_error_not_a_timeout(handle: Handler) -> None:
    async with _raw_server(handle) as base_url, _client(base_url) as client:
        with pytest.raises(APIConnectionError) as raised:
            await _answer(client)
    assert not isinstance(raised.value, APITimeoutError)


async def test_a_server_that_stops_sending_times_out() -> None:
    async with _raw_server(_stall) as base_url, _client(base_url, timeout=0.3) as client:
        with pytest.raises(APITimeoutError):
            await _answer(client)
