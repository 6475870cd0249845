"""Keyset pagination, newest first: a cursor names the last row of a page by its
`(created_at, id)`, and the next page is the rows strictly older than it.

Unlike an offset, a cursor stays right while rows are added at the head, and reads only the
rows of its page (an index on the columns, usually with the owner first, serves it).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import and_, or_

from atrium.errors import InvalidParameter
from atrium.kit.time import as_utc

Position = tuple[datetime, str]

# What `kit.ids.new_id` makes: a cursor naming anything else was not made here (and a NUL in
# it would reach PostgreSQL, which refuses NUL in text).
_ROW_ID = re.compile(r"[a-z]{1,8}_[A-Za-z0-9]{1,64}")


class Keyed(Protocol):
    """A row a cursor can name."""

    @property
    def created_at(self) -> datetime: ...

    @property
    def id(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def encode_cursor(created_at: datetime, row_id: str) -> str:
    raw = f"{as_utc(created_at).isoformat()}|{row_id}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> Position:
    """The position a cursor of `encode_cursor` names; a 400 for anything else."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, row_id = raw.split("|", 1)
        if not _ROW_ID.fullmatch(row_id):
            raise ValueError(row_id)
        # OverflowError: a stamp at the edge of `datetime` with an offset leaves its range in
        # UTC (`0001-01-01T00:00:00+23:59`), a 500 before (issue 15).
        return as_utc(datetime.fromisoformat(stamp)), row_id
    except (ValueError, OverflowError, binascii.Error) as exc:
        raise InvalidParameter("cursor", "cursor is not one this API returned") from exc


def older_than(created_at_column: Any, id_column: Any, position: Position) -> Any:
    """The SQL condition of the rows after `position` in newest-first order."""
    created_at, row_id = position
    return or_(
        created_at_column < created_at,
        and_(created_at_column == created_at, id_column < row_id),
    )


def split_page(rows: Sequence[K], limit: int) -> tuple[Sequence[K], str | None]:
    """A page out of the `limit + 1` rows fetched for it, and the cursor of the next page (None
    on the last: the extra row is how a page knows more follow)."""
    page = rows[:limit]
    if len(rows) <= limit:
        return page, None
    return page, encode_cursor(page[-1].created_at, page[-1].id)
