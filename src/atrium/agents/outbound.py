"""MCP server URLs obey the outbound-target rule of webhooks (docs/design.md#outbound).

The one place where agents' tools meet that rule when an agent is written. Connections are
checked again, address by address, by the pinned client of `outbound` that every MCP
session uses (no second DNS lookup between the check and the connection).
"""

from __future__ import annotations

from atrium.outbound.public_targets import TargetRefused, check_url
from atrium.settings import Settings

__all__ = ["TargetRefused", "check_server_url"]


def check_server_url(url: str, settings: Settings) -> None:
    """TargetRefused (its message says why and names ATRIUM_ALLOW_PRIVATE_TARGETS) unless `url`
    may be an MCP server's."""
    check_url(url, allow_private=settings.allow_private_targets)
