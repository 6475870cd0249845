"""The errors of the memory group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import NotFound


class MemoryItemNotFound(NotFound):
    """The account has no live item with the id or key (another account's, or an expired one,
    is as unknown as none)."""

    def __init__(self, parameter: str, shown: str) -> None:
        super().__init__(f"no memory item {shown[:80]!r}", details={"parameter": parameter})
