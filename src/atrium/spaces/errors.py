"""The errors of the spaces group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter
from atrium.phpshort.resources import RecordNotFound


class SpaceNameTaken(InvalidParameter):
    """The account has another space with the name."""

    def __init__(self) -> None:
        super().__init__("name", "name has already been taken")


class SpaceNotFound(RecordNotFound):
    """The account has no space with the `id` (another account's is as unknown as none)."""

    noun = "space"
