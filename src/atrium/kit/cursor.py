"""Keyset pagination, newest first: a cursor names the last row of a page by its
`(created_at, id)`, and the next page is the rows strictly older than it.

Unlike an offset, a cursor stays right while rows are added at the head, and reads only the
rows of its page (an index on the columns, usually with the owner first, serves it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Protocol, TypeVar

from fastapi import Query
from sqlalchemy import and_, or_

from atrium.errors import InvalidParameter
from atrium.kit.time import as_utc

Position = tuple[datetime, str]

# A cursor is `<microseconds since 1970 UTC>.<row id>`: a format a pattern can state whole, so the
# OpenAPI document (`CURSOR_PATTERN`) says exactly which cursors are taken, and every one it
# allows names a possible position. Row ids are what `kit.ids.new_id` makes (a NUL in one would
# reach PostgreSQL, which refuses NUL in text); 16 digits stay inside `datetime` (year 2286).
# An empty cursor is no cursor: the first page.
CURSOR_PATTERN = r"^([0-9]{1,16}\.[a-z]{1,8}_[A-Za-z0-9]{1,64})?$"
_CURSOR = re.compile(CURSOR_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# The `cursor` query parameter of every list that pages with one.
CursorQuery = Annotated[
    str | None,
    Query(
        max_length=200,
        description="`next_cursor` of a page, passed back as it came.",
        json_schema_extra={"pattern": CURSOR_PATTERN},
    ),
]


class Keyed(Protocol):
    """A row a cursor can name."""

    @property
    def created_at(self) -> datetime: ...

    @property
    def id(self) -> str: ...


K = TypeVar("K", bound=Keyed)


def encode_cursor(created_at: datetime, row_id: str) -> str:
    return f"{(as_utc(created_at) - _EPOCH) // _MICROSECOND}.{row_id}"


def decode_cursor(cursor: str) -> Position:
    """The position a cursor of `encode_cursor` names; a 400 for anything else."""
    if not cursor or not _CURSOR.fullmatch(cursor):
        raise InvalidParameter("cursor", "cursor is not one this API returned")
    micros, row_id = cursor.split(".", 1)
    return _EPOCH + int(micros) * _MICROSECOND, row_id


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
