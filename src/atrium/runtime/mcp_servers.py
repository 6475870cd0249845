"""The MCP servers of runs (DESIGN §8): what builds each run's MCP toolsets, and the tool lists
they share.

A server's tool list is reused by later runs for `mcp_tools_cache_seconds`, keyed by URL and
headers, so a busy agent does not list its server's tools before every run. The toolsets
themselves (`runtime/mcp.py`, over pydantic-ai's `MCPToolset`, the `mcp` SDK and fastmcp's
client) are imported by the first run that has an MCP server: those libraries were 17% of
`import atrium.app`, paid at every process's start by deployments whose agents use no MCP
server too (docs/deploy.md, "Start-up").
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import httpx
from pydantic_ai.toolsets import AbstractToolset

from atrium.agents.tools import McpServerTool
from atrium.kit.outbound import outbound_client
from atrium.kit.secrets import SecretBox, SecretsUnavailable
from atrium.runtime.deferred import ApprovalToolset
from atrium.runtime.imports import import_off_loop
from atrium.runtime.toolcalls import ObservedToolset, ToolCallLog, ToolFailure
from atrium.runtime.tools import RunDeps
from atrium.settings import Settings

if TYPE_CHECKING:
    from mcp import types as mcp_types

_MAX_CACHED_SERVERS: Final = 1_024


class ToolListCache:
    """Servers' tool lists, kept `seconds` after they were fetched (in this process)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lists: dict[str, tuple[float, list[mcp_types.Tool]]] = {}

    def get(self, key: str) -> list[mcp_types.Tool] | None:
        found = self._lists.get(key)
        if found is None or found[0] <= time.monotonic():
            return None
        return found[1]

    def put(self, key: str, tools: list[mcp_types.Tool]) -> None:
        if self.seconds <= 0:
            return
        now = time.monotonic()
        if len(self._lists) >= _MAX_CACHED_SERVERS:
            self._lists = {k: v for k, v in self._lists.items() if v[0] > now}
            if len(self._lists) >= _MAX_CACHED_SERVERS:
                self._lists.pop(next(iter(self._lists)))
        self._lists[key] = (now + self.seconds, tools)


def cache_key(url: str, headers: dict[str, str]) -> str:
    # A digest, so no header value is kept as a key; headers are part of it because they may
    # decide which tools a server shows (a user's token).
    canonical = json.dumps([url, sorted(headers.items())], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class McpServers:
    """What builds the MCP toolsets of runs: the settings, the secrets, the shared tool lists."""

    settings: Settings
    secrets: SecretBox
    lists: ToolListCache

    @classmethod
    def of(cls, settings: Settings) -> McpServers:
        return cls(
            settings, SecretBox.of(settings), ToolListCache(settings.mcp_tools_cache_seconds)
        )

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
                # or a client, not both), which is where a pinned client will carry them too.
                # The pinned client checks every address the name resolves to and connects
                # to the one it checked (DESIGN §9), as webhook deliveries do.
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
                from atrium.runtime.mcp import server_toolset  # imported above

                bounded = server_toolset(
                    tool, http=http, headers=headers, lists=self.lists, settings=settings
                )
                observed: AbstractToolset[RunDeps] = ObservedToolset(
                    bounded, log=log, server_label=tool.server_label
                )
                if tool.require_approval != "never":
                    observed = ApprovalToolset(observed, server=tool)
                toolsets.append(observed.prefixed(tool.server_label))
            yield toolsets
