"""List parameters of phpShort-style lists: search, search_by, sort_by, sort, per_page, page.

phpShort (Laravel) silently replaces unknown values with defaults; atrium answers a 400
naming the parameter instead, so a typo never passes unseen (docs/design.md#domains). Strings
are trimmed and an empty `search` means "no search", as Laravel's TrimStrings and
ConvertEmptyStringsToNull middleware do.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Path, Query
from pydantic.json_schema import SkipJsonSchema

from atrium.errors import InvalidParameter
from atrium.kit.wire_schemas import integer, trimmed_text

PER_PAGE_CHOICES: tuple[int, ...] = (10, 25, 50, 100)
DEFAULT_PER_PAGE = 50
MAX_PAGE = 2_147_483_647
MAX_SEARCH_LENGTH = 255
_DIGITS = re.compile(r"[0-9]{1,19}")

SortDirection = Literal["asc", "desc"]


def has_control_characters(value: str) -> bool:
    """NUL and friends: PostgreSQL refuses NUL in text, and no name or term needs them."""
    return any(ord(char) < 32 or ord(char) == 127 for char in value)


@dataclass(frozen=True, slots=True)
class ListParams:
    """The effective (validated, defaulted) parameters of one list request."""

    search: str | None = None
    search_by: str = "name"
    sort_by: str = "id"
    sort: SortDirection = "desc"
    per_page: int = DEFAULT_PER_PAGE
    page: int = 1

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def descending(self) -> bool:
        return self.sort == "desc"

    def query(self) -> list[tuple[str, str]]:
        """The effective query that pagination links repeat, in phpShort's order (page excluded)."""
        pairs = [] if self.search is None else [("search", self.search)]
        pairs += [
            ("search_by", self.search_by),
            ("sort_by", self.sort_by),
            ("sort", self.sort),
            ("per_page", str(self.per_page)),
        ]
        return pairs


def _choice(parameter: str, value: str | None, allowed: Sequence[str], default: str) -> str:
    if value is None:
        return default
    value = value.strip()
    if value not in allowed:
        raise InvalidParameter(parameter, f"{parameter} must be one of {', '.join(allowed)}")
    return value


def _integer(parameter: str, value: str, message: str) -> int:
    value = value.strip()
    if not _DIGITS.fullmatch(value):
        raise InvalidParameter(parameter, message)
    return int(value)


def parse_list_params(
    *,
    search: str | None,
    search_by: str | None,
    sort_by: str | None,
    sort: str | None,
    per_page: str | None,
    page: str | None,
    search_fields: Sequence[str] = ("name",),
    sort_fields: Sequence[str] = ("id", "name"),
) -> ListParams:
    """Validate raw query values; every bad value is a 400 naming its parameter."""
    term = search.strip() if search is not None else None
    if term is not None and len(term) > MAX_SEARCH_LENGTH:
        raise InvalidParameter("search", f"search must be at most {MAX_SEARCH_LENGTH} characters")
    if term is not None and has_control_characters(term):
        raise InvalidParameter("search", "search must not contain control characters")
    direction = _choice("sort", sort, ("desc", "asc"), "desc")
    size = DEFAULT_PER_PAGE
    if per_page is not None:
        allowed = ", ".join(str(choice) for choice in PER_PAGE_CHOICES)
        size = _integer("per_page", per_page, f"per_page must be one of {allowed}")
        if size not in PER_PAGE_CHOICES:
            raise InvalidParameter("per_page", f"per_page must be one of {allowed}")
    number = 1
    if page is not None:
        message = f"page must be an integer from 1 to {MAX_PAGE}"
        number = _integer("page", page, message)
        if not 1 <= number <= MAX_PAGE:
            raise InvalidParameter("page", message)
    return ListParams(
        search=term or None,
        search_by=_choice("search_by", search_by, search_fields, search_fields[0]),
        sort_by=_choice("sort_by", sort_by, sort_fields, sort_fields[0]),
        sort="asc" if direction == "asc" else "desc",
        per_page=size,
        page=number,
    )


# The query as the OpenAPI document states it: the values `parse_list_params` takes, so that
# generated clients and fuzzers send what the server accepts.
# The Python type stays text so that every refusal is atrium's 400 naming the parameter.
_Text = str | SkipJsonSchema[None]


async def list_params(
    search: Annotated[
        _Text,
        Query(
            description="Case-insensitive substring of the searched field (trimmed; at most "
            f"{MAX_SEARCH_LENGTH} characters, no control characters; empty: no search).",
            json_schema_extra={"pattern": trimmed_text(MAX_SEARCH_LENGTH)},
        ),
    ] = None,
    search_by: Annotated[
        _Text, Query(description="Field to search: `name`.", json_schema_extra={"enum": ["name"]})
    ] = None,
    sort_by: Annotated[
        _Text,
        Query(
            description="`id` (date created, the default) or `name`.",
            json_schema_extra={"enum": ["id", "name"]},
        ),
    ] = None,
    sort: Annotated[
        _Text,
        Query(
            description="`desc` (default) or `asc`.", json_schema_extra={"enum": ["desc", "asc"]}
        ),
    ] = None,
    per_page: Annotated[
        _Text,
        Query(
            description="Page size: 10, 25, 50 (default) or 100.",
            json_schema_extra={"type": "integer", "enum": list(PER_PAGE_CHOICES)},
        ),
    ] = None,
    page: Annotated[
        _Text,
        Query(description="Page number, from 1.", json_schema_extra=integer(1, MAX_PAGE)),
    ] = None,
) -> ListParams:
    """FastAPI dependency: the query is declared (so it is documented) but validated here.

    `async` although it never awaits: FastAPI would run a plain `def` in a worker thread."""
    return parse_list_params(
        search=search,
        search_by=search_by,
        sort_by=sort_by,
        sort=sort,
        per_page=per_page,
        page=page,
    )


ListQuery = Annotated[ListParams, Depends(list_params)]


MAX_RECORD_ID = 2_147_483_647


# A record id in a path, as the OpenAPI document states it: digits only (`record_id`).
RecordId = Annotated[
    str,
    Path(
        description="The record's id, a positive integer.",
        json_schema_extra=integer(1, MAX_RECORD_ID),
    ),
]


def record_id(raw: str) -> int | None:
    """An integer id from a path: 400 when not an integer, None when it cannot exist (404)."""
    if not (raw.isascii() and raw.isdigit()):
        raise InvalidParameter("id", "id must be a positive integer")
    if len(raw) > len(str(MAX_RECORD_ID)):
        return None
    value = int(raw)
    return value if 1 <= value <= MAX_RECORD_ID else None
