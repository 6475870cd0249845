"""The HTTP client under the SDK client of `openai-compatible:` models: the OpenAI SDK's own
aiohttp transport (`openai[aiohttp]`, `DefaultAioHttpClient`) instead of its default httpx2 one.

With a thousand runs streaming at once the default client is a fifth of the server's CPU:
httpcore2's pool scans every connection on each request start and each response close (probing
each idle socket for readability), h11 parses and validates in Python, and every read passes
anyio's cancel scopes and task groups. aiohttp parses in C and keeps idle connections in a deque
per host. The SDK's requests, retries, timeouts and errors are the same: the transport sits under
httpx2's client (docs/decisions/0009-aiohttp-under-the-openai-sdk.md).

One difference is undone here: the SDK's copy of the transport maps every aiohttp connection
error, a refused connection or a server hanging up included, to httpx2's `ConnectTimeout`, so the
SDK would report "Request timed out." where it reports "Connection error." over httpx2 (and a run
would fail saying so). `AioHttpClient` maps those back to httpx2's connection errors; aiohttp's
own timeouts stay timeouts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any, cast

import aiohttp
import httpx2
from openai import DefaultAioHttpClient


class AioHttpClient(DefaultAioHttpClient):
    """The SDK's aiohttp client (its defaults: timeouts, limits, redirects), its connection
    errors mapped as httpx2 maps them. Its aiohttp session is made on the first request, so on
    the event loop that uses it, and closed by `aclose` (the SDK client's `close`)."""

    def _init_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
        return _Mapped(super()._init_transport(*args, **kwargs))

    def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
        return _Mapped(super()._init_proxy_transport(*args, **kwargs))


class _Mapped(httpx2.AsyncBaseTransport):
    def __init__(self, transport: httpx2.AsyncBaseTransport) -> None:
        self._transport = transport

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        with _connection_errors():
            response = await self._transport.handle_async_request(request)
        response.stream = _MappedStream(cast(httpx2.AsyncByteStream, response.stream))
        return response

    async def aclose(self) -> None:
        await self._transport.aclose()


class _MappedStream(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _connection_errors():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        with _connection_errors():
            await self._stream.aclose()


@contextmanager
def _connection_errors() -> Iterator[None]:
    try:
        yield
    except httpx2.ConnectTimeout as exc:
        cause = exc.__cause__
        timed_out = isinstance(cause, aiohttp.ServerTimeoutError)  # connect or read: kept
        if timed_out or not isinstance(cause, aiohttp.ClientConnectionError):
            raise
        if isinstance(cause, aiohttp.ClientConnectorError):  # refused, unreachable, DNS
            raise httpx2.ConnectError(str(cause)) from cause
        raise httpx2.NetworkError(str(cause)) from cause  # hung up, reset
