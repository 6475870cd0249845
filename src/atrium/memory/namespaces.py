"""Namespaces: lists of segments, stored joined so that a prefix of segments is a text prefix."""

from __future__ import annotations

import re
from typing import Final

from atrium.errors import InvalidParameter

SEGMENT_PATTERN: Final = r"^[A-Za-z0-9_.:@-]{1,64}$"
MAX_SEGMENTS: Final = 8
_SEGMENT = re.compile(SEGMENT_PATTERN)
# A namespace written as query text, `users/alice` (a trailing "/" allowed); the prefix form
# may also be empty. Stated in the OpenAPI document, so what it calls valid is accepted.
_TEXT = r"[A-Za-z0-9_.:@-]{1,64}(?:/[A-Za-z0-9_.:@-]{1,64}){0,7}/?"
TEXT_PATTERN: Final = f"^{_TEXT}$"
PREFIX_TEXT_PATTERN: Final = f"^(?:{_TEXT})?$"


def to_path(segments: list[str]) -> str:
    """`["users", "alice"]` -> `"users/alice/"`: the trailing "/" keeps `users/al` from
    matching `users/alice` as a prefix."""
    return "".join(f"{segment}/" for segment in segments)


def parse(text: str, *, parameter: str, allow_empty: bool) -> list[str]:
    """Segments of a query parameter written `users/alice`; a 400 naming `parameter` else."""
    segments = [segment for segment in text.split("/") if segment] if text else []
    if not segments and not allow_empty:
        raise InvalidParameter(parameter, f"{parameter} needs at least one segment")
    return check(segments, parameter=parameter)


def check(segments: list[str], *, parameter: str) -> list[str]:
    """The segments, or a 400 naming `parameter` (a body's list, or a query's text)."""
    if len(segments) > MAX_SEGMENTS:
        raise InvalidParameter(parameter, f"{parameter} has more than {MAX_SEGMENTS} segments")
    for segment in segments:
        if not _SEGMENT.fullmatch(segment):
            raise InvalidParameter(
                parameter, f"{parameter} segments are 1-64 of A-Z a-z 0-9 _ . : @ -"
            )
    return segments
