"""The MCP servers' tool lists that later runs reuse (docs/design.md#tools), for
`mcp_tools_cache_seconds`, keyed by URL and headers: a busy agent does not list its server's
tools before every run. Apart from `runtime/mcp.py` (which fills it) and `mcp_servers.py`
(which holds it), so neither imports the other for it, and holding it imports no MCP library.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import TYPE_CHECKING, Final

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
