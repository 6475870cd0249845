"""Prefixed, random, url-safe identifiers (`run_…`, `thr_…`, `agt_…`), and the rule every id
in a path or a filter is held to before it reaches a query."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from typing import Final

MAX_ID_LENGTH: Final = 40
# What `new_id` makes; anything else (a NUL or a surrogate: PostgreSQL refuses them) names no
# record, so it is answered "not found" without a query.
ID_PATTERN: Final = rf"^[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH}}}$"
_ID: Final = re.compile(ID_PATTERN)


def new_id(prefix: str, nbytes: int = 16) -> str:
    """`prefix_` + url-safe random text: unguessable, so ids never reveal counts or order."""
    return f"{prefix}_{secrets.token_urlsafe(nbytes).replace('-', 'a').replace('_', 'b')}"


def looks_like_id(value: str) -> bool:
    """Whether `value` could name a record (`ID_PATTERN`); False means no query can find it."""
    return _ID.match(value) is not None


def known_id(value: str, not_found: Callable[[str], Exception]) -> str:
    """`value` if it could name a record, else `not_found(value)` raised."""
    if not looks_like_id(value):
        raise not_found(value)
    return value
