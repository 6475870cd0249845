"""The errors of the analytics group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter


class UsageRangeInvalid(InvalidParameter):
    """`start_date` is after `end_date`, or the range is longer than the report may be."""

    def __init__(self, message: str) -> None:
        super().__init__("start_date", message)
