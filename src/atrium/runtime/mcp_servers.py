"""The MCP servers of runs (docs/design.md#tools): what builds each run's MCP toolsets,
holding the tool lists they share (`runtime/mcp_tool_lists.py`). The toolsets themselves
(`runtime/mcp.py`, over pydantic-ai's `MCPToolset`, the `mcp` SDK and fastmcp's client) are
imported by the first run that has an MCP server: those libraries are 17% of
`import atrium.app`, which every process would pay at start, whether its agents use MCP or not
(docs/decisions/0015-imports-on-first-use.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import httpx
from pydantic_ai.toolsets import AbstractToolset

from atrium.agents.tool_config import McpServerTool
from atrium.outbound.pinned_client import outbound_client
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.deferred import ApprovalToolset
from atrium.runtime.imports import import_off_loop
from atrium.runtime.mcp_limits import LimitedToolset, ResponseLimit, response_bytes
from atrium.runtime.mcp_tool_lists import ToolListCache
from atrium.runtime.observed_calls import ObservedToolset, ToolCallLog, ToolFailure
from atrium.secrets_at_rest import SecretBox, SecretsUnavailable
from atrium.settings import Settings


@dataclass(frozen=True, slots=True)
class McpServers:
    """What builds the MCP toolsets of runs: the settings, the secrets, the shared tool lists."""

    settings: Settings
    secrets: SecretBox
    lists: ToolListCache

    @classmethod
    def of(cls, settings: Settings) -> McpServers:
        lists = ToolListCache(settings.mcp_tools_cache_seconds, settings.mcp_tools_cache_max_bytes)
        return cls(settings, SecretBox.of(settings), lists)

    def _headers(self, tool: McpServerTool) -> dict[str, str]:
        try:
            return {name: self.secrets.decrypt(token) for name, token in tool.headers.items()}
        except SecretsUnavailable as exc:
            raise ToolFailure(f"MCP server {tool.server_label}: headers: {exc}") from None

    @asynccontextmanager
    async def toolsets(
        self, tools: list[McpServerTool], log: ToolCallLog
    ) -> AsyncIterator[list[AbstractToolset[RunDeps]]]:
        """The run's MCP toolsets; their HTTP clients are closed when the block ends."""
        settings = self.settings
        if tools:  # the MCP SDK, fastmcp and pydantic-ai's MCPToolset, the first time
            await import_off_loop(("atrium.runtime.mcp",))
        async with AsyncExitStack() as clients:
            toolsets: list[AbstractToolset[RunDeps]] = []
            for tool in tools:
                headers = self._headers(tool)
                # Redirects are not followed: a server could point a run at an address the
                # outbound rule refuses. Headers travel on the client (pydantic-ai takes them
                # or a client, not both). The pinned client checks every address the name
                # resolves to and connects to the one it checked, as webhook deliveries do
                # (docs/design.md#outbound).
                http = await clients.enter_async_context(
                    outbound_client(
                        settings,
                        timeout=httpx.Timeout(
                            settings.mcp_call_timeout_seconds,
                            connect=settings.mcp_connect_timeout_seconds,
                        ),
                        follow_redirects=False,
                    )
                )
                http.headers.update(headers)
                limit = ResponseLimit(response_bytes(settings))
                limit.install(http)
                from atrium.runtime.mcp import server_toolset  # imported above

                bounded = server_toolset(
                    tool, http=http, headers=headers, lists=self.lists, settings=settings
                )
                limited = LimitedToolset(
                    bounded, server_label=tool.server_label, limit=limit, settings=settings
                )
                observed: AbstractToolset[RunDeps] = ObservedToolset(
                    limited, log=log, server_label=tool.server_label
                )
                if tool.require_approval != "never":
                    observed = ApprovalToolset(observed, server=tool)
                toolsets.append(observed.prefixed(tool.server_label))
            yield toolsets
