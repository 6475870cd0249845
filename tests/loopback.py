"""An ASGI app served on loopback for a test: the fake model servers, the MCP servers.

`async with LoopbackServer(app) as served:` runs uvicorn in the test's event loop;
`with LoopbackServer(app):` runs it in a thread of its own, so it still answers while the
test's loop is blocked (a test that measures whether the loop freezes needs that).
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Literal

import uvicorn

from tests.processes import free_port


class LoopbackServer:
    """`app` at `http://127.0.0.1:<port><path>` (`url`) while the block runs."""

    def __init__(
        self,
        app: Any,
        *,
        path: str = "",
        port: int | None = None,
        lifespan: Literal["auto", "on", "off"] = "auto",
        force_exit: bool = False,
        interface: Literal["auto", "asgi3"] = "auto",
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}{path}"
        # A request still open at the end (a sleeping tool, a stalled answer) is waited for a
        # moment only; `force_exit` drops it at once (its client may have been killed).
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            ws="none",
            lifespan=lifespan,
            # A bound method `app(self, scope, receive, send)` reads as ASGI 2 to the guess.
            interface=interface,
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._force_exit = force_exit
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None

    async def __aenter__(self) -> LoopbackServer:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
            await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop()
        if self._task is not None:
            await self._task

    def __enter__(self) -> LoopbackServer:
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        while not self._server.started:
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self._stop()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def connections(self) -> int:
        """How many client connections are open now."""
        return len(self._server.server_state.connections)

    def _stop(self) -> None:
        self._server.should_exit = True
        self._server.force_exit = self._force_exit
