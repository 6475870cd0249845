"""Remote MCP servers as pydantic-ai toolsets, built for each run (docs/design.md#tools).

Each `{"type": "mcp", …}` tool of an agent becomes pydantic-ai's `MCPToolset` over streamable
HTTP, filtered to its `allowed_tools` and prefixed with its label (the model sees
`docs_search`). Connecting, listing and calling are each bounded by a setting, and any failure
(an unreachable server, a slow one, a tool that errors) ends the run with TOOL_ERROR: a run
never waits on a server without end. Its tool list may come from the `ToolListCache`
(`runtime/mcp_tool_lists.py`) that `runtime/mcp_servers.py` holds; that module builds these
toolsets and imports this one (with the `mcp` SDK and fastmcp's client) only when a run has an
MCP server.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Final, Self
from urllib.parse import urlsplit

import httpx
from fastmcp.client.client import CallToolResult
from fastmcp.exceptions import ToolError
from mcp import types as mcp_types
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry, ToolFailed
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from atrium.agents.outbound import TargetRefused, check_server_url
from atrium.agents.tool_config import McpServerTool
from atrium.kit.json_object import JsonObject
from atrium.observability.logs import escape_control
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.mcp_limits import tools_within_limits
from atrium.runtime.mcp_output_schemas import OutputChecks, forget_in_session
from atrium.runtime.mcp_tool_lists import ToolListCache, cache_key
from atrium.runtime.observed_calls import ToolFailure
from atrium.settings import Settings

log = logging.getLogger("atrium.runtime.mcp")

_MAX_REASON: Final = 300
# Raised by a tool to steer the agent loop, not failures: they pass through untouched.
_CONTROL_FLOW = (ModelRetry, ToolFailed, CallDeferred, ApprovalRequired)


class _CachedListToolset(MCPToolset[RunDeps]):
    """`MCPToolset` whose tool list comes from the cache when a recent run fetched it, and is
    listed within the limits otherwise (`runtime/mcp_limits.py`); listed once a run."""

    def __init__(
        self,
        url: str,
        *,
        cache: ToolListCache,
        cache_key: str,
        settings: Settings,
        **options: Any,
    ) -> None:
        super().__init__(url, **options)
        self._list_cache = cache
        self._list_key = cache_key
        self._settings = settings
        self._listed: list[mcp_types.Tool] | None = None
        self._output_checks = OutputChecks()

    async def list_tools(self) -> list[mcp_types.Tool]:
        if self._listed is None:
            cached = self._list_cache.get(self._list_key)
            if cached is None:
                label = self.id or ""
                cached, size = await tools_within_limits(
                    self.client, server_label=label, settings=self._settings
                )
                self._list_cache.put(self._list_key, cached, size)
            self._listed = cached
            self._output_checks.learn(cached)
        self._teach_session(self._listed)
        return self._listed

    def _teach_session(self, tools: list[mcp_types.Tool]) -> None:
        """The MCP SDK lists the server's tools again on a call of one its session has not
        learnt, which would undo the cache, and checks each result against its tool's output
        schema, with a backtracking regex engine: the session learns every tool, with no output
        schema, and atrium checks results itself (`runtime/mcp_output_schemas.py`)."""
        try:
            session = self.client.session
        except RuntimeError:  # not connected
            return
        forget_in_session(session, tools)

    async def _call_tool_checked(
        self, name: str, args: JsonObject, *, metadata: JsonObject | None, use_task: bool
    ) -> CallToolResult:
        """Every call's result, checked against its tool's output schema. Private to
        pydantic-ai (the one place that holds the raw result), so read with care: should it
        change, results go to the model unchecked; no MCP client checks them either."""
        self._teach_session(self._listed or [])  # a session opened since the list
        result = await super()._call_tool_checked(name, args, metadata=metadata, use_task=use_task)
        self._output_checks.check(name, result.structured_content)
        return result


def _reason(exc: BaseException) -> str:
    """What went wrong, in a line: an error's own message, or its type when it has none."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"the server answered HTTP {exc.response.status_code}"
    text = str(exc).strip() or type(exc).__name__
    return text[:_MAX_REASON]


@dataclass(kw_only=True)
class McpServerToolset(WrapperToolset[RunDeps]):
    """One MCP server within one run: bounded in time, filtered, failures as `ToolFailure`."""

    server_label: str
    url: str
    allowed: frozenset[str] | None
    settings: Settings

    async def __aenter__(self) -> Self:
        seconds = self.settings.mcp_connect_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                check_server_url(self.url, self.settings)
                await self.wrapped.__aenter__()
        except TargetRefused as exc:
            raise ToolFailure(f"MCP server {self.server_label}: server_url {exc}") from None
        except TimeoutError:
            raise ToolFailure(
                f"MCP server {self.server_label} ({self.url}) did not connect within {seconds:g} s"
            ) from None
        except Exception as exc:
            raise ToolFailure(
                f"MCP server {self.server_label} ({self.url}) could not be reached: {_reason(exc)}"
            ) from exc
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        """Close the session within the connect timeout. By now the run's outcome is decided:
        a close that fails (a server gone mid-run, a transport error on the way out) or hangs
        is logged, never raised into the run's end, where it would replace its outcome; an
        error that ends the run goes on as it is (nothing is suppressed)."""
        seconds = self.settings.mcp_connect_timeout_seconds
        where = f"MCP server {self.server_label} ({urlsplit(self.url).hostname})"
        try:
            async with asyncio.timeout(seconds):
                await self.wrapped.__aexit__(*args)
        except TimeoutError:
            log.warning(
                "%s: closing the session took over %g s; left to close itself", where, seconds
            )
        except Exception as exc:
            # The reason quotes what the server sent: escaped, one clean line whatever
            # logging set-up prints it (the log record factory escapes it too).
            log.warning("%s: closing the session failed: %s", where, escape_control(_reason(exc)))
        return None

    async def get_tools(self, ctx: RunContext[RunDeps]) -> dict[str, ToolsetTool[RunDeps]]:
        seconds = self.settings.mcp_list_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                tools = await self.wrapped.get_tools(ctx)
        except ToolFailure:
            raise
        except TimeoutError:
            raise ToolFailure(
                f"MCP server {self.server_label} did not list its tools within {seconds:g} s"
            ) from None
        except Exception as exc:
            raise ToolFailure(
                f"MCP server {self.server_label} could not list its tools: {_reason(exc)}"
            ) from exc
        if self.allowed is None:
            return tools
        return {name: tool for name, tool in tools.items() if name in self.allowed}

    async def call_tool(
        self,
        name: str,
        tool_args: JsonObject,
        ctx: RunContext[RunDeps],
        tool: ToolsetTool[RunDeps],
    ) -> Any:
        seconds = self.settings.mcp_call_timeout_seconds
        shown = f"{self.server_label}_{name}"
        try:
            async with asyncio.timeout(seconds):
                return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except _CONTROL_FLOW:
            raise
        except TimeoutError:
            raise ToolFailure(f"{shown} (MCP) did not answer within {seconds:g} s") from None
        except ToolError as exc:
            raise ToolFailure(f"{shown} (MCP) failed: {_reason(exc)}") from None
        except Exception as exc:
            raise ToolFailure(f"{shown} (MCP) could not be called: {_reason(exc)}") from exc


def server_toolset(
    tool: McpServerTool,
    *,
    http: httpx.AsyncClient,
    headers: dict[str, str],
    lists: ToolListCache,
    settings: Settings,
) -> McpServerToolset:
    """The toolset of one MCP server within one run, over `http` (which carries `headers`)."""
    server = _CachedListToolset(
        tool.server_url,
        cache=lists,
        cache_key=cache_key(tool.server_url, headers),
        settings=settings,
        http_client=http,
        id=tool.server_label,
        tool_error_behavior="error",
        init_timeout=settings.mcp_connect_timeout_seconds,
        # Longer than atrium's own bounds, so those fire first with their message.
        read_timeout=max(settings.mcp_call_timeout_seconds, settings.mcp_list_timeout_seconds) + 5,
    )
    return McpServerToolset(
        server,
        server_label=tool.server_label,
        url=tool.server_url,
        allowed=None if tool.allowed_tools is None else frozenset(tool.allowed_tools),
        settings=settings,
    )
