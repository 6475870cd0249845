"""A real MCP server (fastmcp, streamable HTTP, loopback) whose one tool has a side effect.

`charge(amount)` counts each execution (`server.charges`) and stays in flight until the test
sets `server.released`: the test kills the worker that made the call while it is at the server,
and the count says how many times the side effect happened. With `server.decline` set, a call
charges, then answers with that MCP tool error (a failure after the side effect).
"""

from __future__ import annotations

import asyncio

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

from tests.loopback import LoopbackServer


class ChargingMcpServer:
    """`async with ChargingMcpServer() as server:` serves at `server.url` until the block ends."""

    def __init__(self) -> None:
        self.charges = 0
        self.released = asyncio.Event()
        self.decline: str | None = None
        server = FastMCP("atrium-test-charges")

        @server.tool
        async def charge(amount: int) -> str:
            """Charge the amount: each call is one more charge."""
            self.charges += 1
            await self.released.wait()
            if self.decline is not None:
                raise ToolError(self.decline)
            return f"charged {amount}"

        # The call of a killed worker is still held when the test ends: waited for a moment.
        self._served = LoopbackServer(
            server.http_app(path="/mcp", stateless_http=True), path="/mcp"
        )
        self.port, self.url = self._served.port, self._served.url

    async def __aenter__(self) -> ChargingMcpServer:
        await self._served.__aenter__()
        return self

    async def __aexit__(self, *_: object) -> None:
        self.released.set()
        await self._served.__aexit__()

    async def charged(self, count: int, *, within: float = 30.0) -> None:
        """Until `count` charges reached the server."""
        deadline = asyncio.get_running_loop().time() + within
        while self.charges < count:
            assert asyncio.get_running_loop().time() < deadline, f"{self.charges} charges"
            await asyncio.sleep(0.02)
