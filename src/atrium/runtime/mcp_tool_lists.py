"""The MCP servers' tool lists that later runs reuse (docs/design.md#tools), for
`mcp_tools_cache_seconds`, keyed by URL and headers: a busy agent does not list its server's
tools before every run. Apart from `runtime/mcp.py` (which fills it) and `mcp_servers.py`
(which holds it), so neither imports the other for it, and holding it imports no MCP library.

Bounded in entries and in bytes (`mcp_tools_cache_max_bytes`, the oldest leave first), and a
list leaves when it expires, read again or not: lists that no run asks for again do not hold
the process's memory (docs/decisions/0041-mcp-output-and-tool-list-bounds.md).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mcp import types as mcp_types

_MAX_CACHED_SERVERS: Final = 1_024


@dataclass(frozen=True, slots=True)
class _Entry:
    expires: float
    tools: list[mcp_types.Tool]
    size: int


class ToolListCache:
    """Servers' tool lists, kept `seconds` after they were fetched (in this process), at most
    `max_bytes` of them (their size as JSON) in all."""

    def __init__(self, seconds: float, max_bytes: int) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.held_bytes = 0
        self._lists: dict[str, _Entry] = {}  # in order of expiry: `seconds` is the same for all
        self._sweep: asyncio.TimerHandle | None = None

    def __len__(self) -> int:
        return len(self._lists)

    def get(self, key: str) -> list[mcp_types.Tool] | None:
        found = self._lists.get(key)
        if found is None or found.expires <= time.monotonic():
            return None
        return found.tools

    def put(self, key: str, tools: list[mcp_types.Tool], size: int) -> None:
        """Keep `tools` (`size` bytes of JSON) for later runs; called on the event loop."""
        if self.seconds <= 0 or size > self.max_bytes:
            return
        self._drop(key)
        self._drop_expired()
        while self._lists and (
            len(self._lists) >= _MAX_CACHED_SERVERS or self.held_bytes + size > self.max_bytes
        ):
            self._drop(next(iter(self._lists)))
        self._lists[key] = _Entry(time.monotonic() + self.seconds, tools, size)
        self.held_bytes += size
        if self._sweep is None:
            self._sweep = asyncio.get_running_loop().call_later(self.seconds, self._on_sweep)

    def _drop(self, key: str) -> None:
        entry = self._lists.pop(key, None)
        if entry is not None:
            self.held_bytes -= entry.size

    def _drop_expired(self) -> None:
        now = time.monotonic()
        for key in [key for key, entry in self._lists.items() if entry.expires <= now]:
            self._drop(key)

    def _on_sweep(self) -> None:
        """A timer, not the next read, lets a list go: one timer at a time, set for the list
        that expires next."""
        self._sweep = None
        self._drop_expired()
        if self._lists:
            soonest = min(entry.expires for entry in self._lists.values())
            delay = max(soonest - time.monotonic(), 0.0)
            self._sweep = asyncio.get_running_loop().call_later(delay, self._on_sweep)


def cache_key(url: str, headers: dict[str, str]) -> str:
    # A digest, so no header value is kept as a key; headers are part of it because they may
    # decide which tools a server shows (a user's token).
    canonical = json.dumps([url, sorted(headers.items())], separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
