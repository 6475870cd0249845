"""Closing an MCP session at a run's end: bounded by the connect timeout, and a failure there is
logged (escaped) rather than raised into the run's end, where it would replace the run's outcome.

The session under `McpServerToolset` is pydantic-ai's `MCPToolset`; here a stand-in for that
library part closes badly on purpose (a real server rarely does so on cue)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from pydantic_ai import RunContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.mcp import McpServerToolset
from atrium.settings import Settings

CONNECT_TIMEOUT = 0.5


class _Session(AbstractToolset[RunDeps]):
    """An MCP session that connects and then closes with `on_close`."""

    def __init__(self, on_close: Callable[[], Awaitable[None]]) -> None:
        self.on_close = on_close
        self.closed = False

    @property
    def id(self) -> str:
        return "session"

    async def __aenter__(self) -> _Session:
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        await self.on_close()
        self.closed = True
        return None

    async def get_tools(self, ctx: RunContext[RunDeps]) -> dict[str, ToolsetTool[RunDeps]]:
        return {}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[RunDeps], tool: Any
    ) -> Any:
        raise AssertionError("not called")


def _server(session: _Session) -> McpServerToolset:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        allow_private_targets=True,
        mcp_connect_timeout_seconds=CONNECT_TIMEOUT,
    )
    return McpServerToolset(
        session,
        server_label="docs",
        url="http://127.0.0.1:9/mcp",
        allowed=None,
        settings=settings,
    )


async def test_a_close_that_fails_is_logged_escaped_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fail() -> None:
        raise RuntimeError("stream closed\r\nFORGED log line \x1b[31m")

    caplog.set_level(logging.WARNING, logger="atrium.runtime.mcp")
    async with _server(_Session(fail)):
        pass  # the run's work: it ended well, and so does the block
    [record] = caplog.records
    message = record.getMessage()
    assert message.startswith("MCP server docs (127.0.0.1): closing the session failed: ")
    assert "\r" not in message and "\n" not in message and "\x1b" not in message
    assert "\\r\\nFORGED log line \\x1b[31m" in message


async def test_a_close_that_hangs_is_given_up_after_the_connect_timeout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def hang() -> None:
        await asyncio.sleep(3600)

    caplog.set_level(logging.WARNING, logger="atrium.runtime.mcp")
    started = time.monotonic()
    async with _server(_Session(hang)):
        pass
    assert CONNECT_TIMEOUT <= time.monotonic() - started < CONNECT_TIMEOUT + 2
    assert "took over 0.5 s" in caplog.records[0].getMessage()


async def test_the_runs_own_error_goes_on_past_a_failed_close() -> None:
    async def fail() -> None:
        raise OSError("connection reset")

    with pytest.raises(ValueError, match="the run's own error"):
        async with _server(_Session(fail)):
            raise ValueError("the run's own error")


async def test_a_clean_close_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    async def close() -> None:
        return None

    session = _Session(close)
    caplog.set_level(logging.WARNING, logger="atrium.runtime.mcp")
    async with _server(session):
        pass
    assert session.closed and caplog.records == []
