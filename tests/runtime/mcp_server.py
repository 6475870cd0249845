"""A real MCP server (fastmcp, streamable HTTP) that the tools tests run on a loopback port.

Its tools: `echo(text)`, `add(a, b)`, `fail(message)` (answers with an MCP tool error),
`flaky(key, failures)` (an MCP tool error for the first `failures` calls with that key, then an
answer), `sleep(seconds)`, `nested(depth)` (an object that many levels deep), and `b_c` / `c`
(names that collide once prefixed, see the collision test).
It records what reached it: every call with its arguments and the request's headers, and how
many times its tools were listed.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp.types as mt
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_http_headers
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.tool import ToolResult

from tests.loopback import LoopbackServer


@dataclass
class Call:
    name: str
    arguments: dict[str, Any]
    headers: dict[str, str]


@dataclass
class Seen:
    calls: list[Call] = field(default_factory=list)
    lists: int = 0
    flaky: dict[str, int] = field(default_factory=dict)  # calls of `flaky` by key


class _Recorder(Middleware):
    def __init__(self, seen: Seen) -> None:
        self.seen = seen

    async def on_call_tool(
        self,
        context: MiddlewareContext[mt.CallToolRequestParams],
        call_next: CallNext[mt.CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        message = context.message
        headers = get_http_headers(include_all=True)
        self.seen.calls.append(Call(message.name, dict(message.arguments or {}), headers))
        return await call_next(context)

    async def on_list_tools(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        self.seen.lists += 1
        return await call_next(context)


def _server(seen: Seen) -> FastMCP:
    server = FastMCP("atrium-test")

    @server.tool
    def echo(text: str) -> str:
        """Say the text back."""
        return f"echo: {text}"

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def fail(message: str) -> str:
        """Always fails with the message."""
        raise ToolError(message)

    @server.tool
    def flaky(key: str, failures: int) -> str:
        """Fails the first `failures` calls with this key, then answers."""
        seen.flaky[key] = call = seen.flaky.get(key, 0) + 1
        if call <= failures:
            raise ToolError(f"{key} is busy (call {call}), try again")
        return f"{key} ready after {call - 1} failures"

    @server.tool
    async def sleep(seconds: float) -> str:
        """Answer after a while."""
        await asyncio.sleep(seconds)
        return "awake"

    @server.tool
    def nested(depth: int) -> dict[str, Any]:
        """An object `depth` levels deep."""
        value: dict[str, Any] = {}
        for _ in range(depth - 1):
            value = {"a": value}
        return value

    @server.tool
    def b_c() -> str:
        return "b_c"

    @server.tool
    def c() -> str:
        return "c"

    server.add_middleware(_Recorder(seen))
    return server


class McpTestServer:
    """`async with McpTestServer() as server:` serves at `server.url` until the block ends."""

    def __init__(self) -> None:
        self.seen = Seen()
        app = _server(self.seen).http_app(path="/mcp", stateless_http=True)
        self._served = LoopbackServer(app, path="/mcp")
        self.port, self.url = self._served.port, self._served.url

    async def __aenter__(self) -> McpTestServer:
        await self._served.__aenter__()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._served.__aexit__()


@asynccontextmanager
async def silent_server() -> AsyncIterator[str]:
    """A loopback URL whose server accepts connections and never answers (a hung server)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = await asyncio.start_server(hold, sock=listener)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()
