"""The errors of memory blocks, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import Conflict, InvalidParameter, NotFound


class BlockNotFound(NotFound):
    """The account has no block with the label (another account's is as unknown as none)."""

    def __init__(self, label: str) -> None:
        super().__init__(f"no memory block {label[:80]!r}", details={"parameter": "label"})


class BlockLabelTaken(Conflict):
    def __init__(self, label: str) -> None:
        super().__init__(
            f"a memory block {label!r} exists already; update it, or delete it first",
            details={"parameter": "label"},
        )


class BlockVersionChanged(Conflict):
    """`if_version` named a version the block has moved past (another writer came first)."""

    def __init__(self, label: str, version: int) -> None:
        super().__init__(
            f"memory block {label!r} is at version {version}; read it again and retry",
            details={"parameter": "if_version", "version": version},
        )


class BlockTooLong(InvalidParameter):
    """The change would leave more characters in the block than its limit: refused whole,
    never truncated (a model reads the message and shortens its text)."""

    def __init__(self, parameter: str, label: str, chars: int, limit: int) -> None:
        super().__init__(
            parameter,
            f"memory block {label!r} would hold {chars:,} characters, over its limit of "
            f"{limit:,}; shorten the text or replace part of the block",
            chars=chars,
            limit=limit,
        )
