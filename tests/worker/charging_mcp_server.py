"""A real MCP server (fastmcp, streamable HTTP, loopback) whose one tool has a side effect.

`charge(amount)` counts each execution (`server.charges`) and stays in flight until the test
sets `server.released`: the test kills the worker that made the call while it is at the server,
and the count says how many times the side effect happened.
"""

from __future__ import annotations

import asyncio

import uvicorn
from fastmcp import FastMCP

from tests.processes import free_port


class ChargingMcpServer:
    """`async with ChargingMcpServer() as server:` serves at `server.url` until the block ends."""

    def __init__(self) -> None:
        self.charges = 0
        self.released = asyncio.Event()
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        server = FastMCP("atrium-test-charges")

        @server.tool
        async def charge(amount: int) -> str:
            """Charge the amount: each call is one more charge."""
            self.charges += 1
            await self.released.wait()
            return f"charged {amount}"

        app = server.http_app(path="/mcp", stateless_http=True)
        # The call of a killed worker is still held when the test ends: wait for it a moment.
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> ChargingMcpServer:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *_: object) -> None:
        self.released.set()
        self._server.should_exit = True
        if self._task is not None:
            await self._task

    async def charged(self, count: int, *, within: float = 30.0) -> None:
        """Until `count` charges reached the server."""
        deadline = asyncio.get_running_loop().time() + within
        while self.charges < count:
            assert asyncio.get_running_loop().time() < deadline, f"{self.charges} charges"
            await asyncio.sleep(0.02)
