"""JSON Schema fragments for the OpenAPI document: the rules the parsers enforce, stated so that
generated clients and fuzzers send what the server takes (issue 19, item 7).

Patterns are written for both dialects that read them: ECMA 262 (JSON Schema validators) and
Python's `re` (generators such as Hypothesis).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# What `str.strip()` removes (`str.isspace`): a value the server trims may be padded with these.
_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# What pydantic's `strip_whitespace` removes (Unicode White_Space: not U+001C-U+001F).
UNICODE_SPACE = r"\t-\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# `kit.listing.has_control_characters`: C0 controls and DEL.
CONTROL = r"\x00-\x1f\x7f"
# Unicode category Cc: C0, DEL and C1.
UNICODE_CONTROL = r"\x00-\x1f\x7f-\x9f"


def trimmed_text(
    max_length: int, *, required: bool = False, control: str = CONTROL, space: str = _SPACE
) -> str:
    """A pattern for text the server trims (of `space`), then refuses when it holds a `control`
    character or is longer than `max_length` (or, `required`, is empty)."""
    middle = f"[^{control}]{{0,{max_length}}}"
    if required:  # a first character that trimming keeps, then at most max_length - 1 more
        middle = f"[^{space}{control}][^{control}]{{0,{max_length - 1}}}"
    return f"^[{space}]*{middle}[{space}]*$"


def trimmed_choice(*choices: str) -> str:
    """A pattern for one of `choices`, as the server reads it (trimmed)."""
    return f"^[{_SPACE}]*({'|'.join(choices)})[{_SPACE}]*$"


def trimmed_text_schema(
    max_length: int, *, required: bool = False, control: str = CONTROL, space: str = _SPACE
) -> Callable[[dict[str, Any]], None]:
    """`json_schema_extra` for a trimmed text field: the pattern of `trimmed_text` in place of
    the lengths, which the server counts after trimming."""

    def amend(schema: dict[str, Any]) -> None:
        schema.pop("minLength", None)
        schema.pop("maxLength", None)
        schema["pattern"] = trimmed_text(
            max_length, required=required, control=control, space=space
        )

    return amend


# Text without NUL: PostgreSQL refuses NUL in text, so every parser refuses it.
WITHOUT_NUL = r"^[^\x00]*$"
# ... and not blank: something `str.strip()` leaves.
NOT_BLANK_WITHOUT_NUL = rf"^[^\x00]*[^{_SPACE}\x00][^\x00]*$"


def integer(minimum: int, maximum: int, **extra: Any) -> dict[str, Any]:
    """An integer parameter the server reads from text (path, query, header)."""
    return {"type": "integer", "minimum": minimum, "maximum": maximum, **extra}


# `Idempotency-Key`: 1 to 200 printable characters (`str.isprintable`) of a header (Latin-1),
# the first and last not a space (HTTP strips those from a header value).
_PRINTABLE = r"\x21-\x7e\xa1-\xac\xae-\xff"
IDEMPOTENCY_KEY: dict[str, Any] = {
    "pattern": f"^[{_PRINTABLE}]([ {_PRINTABLE}]{{0,198}}[{_PRINTABLE}])?$",
    "description": "1 to 200 printable characters; a retry with the same key and body replays "
    "the first answer.",
}


# A public http(s) URL the outbound checks (`kit.outbound.check_url`) take: a name of two or
# more labels ending in letters (so never an IP literal), an optional port and path. Narrower
# than what the server takes (any public host, percent-encoding, a query), so that every URL the
# document allows is accepted; the description says the rest.
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"


def _http_url(labels: str = "+", path: str = "*") -> str:
    """The URL pattern, with quantifiers for the host's labels before its last and the path's
    characters (bounded ones bound the URL's length)."""
    return rf"https?://({_LABEL}\.){labels}[a-z]{{2,63}}(:[1-9][0-9]{{0,3}})?(/[A-Za-z0-9._~/-]{path})?"


_HTTP_URL = _http_url()
PUBLIC_URL: dict[str, Any] = {
    "pattern": f"^{_HTTP_URL}$",
    "maxLength": 2048,
}


# Form fields (phpShort's groups) are trimmed by the server and are text on the wire: no null.
# Their lengths count after trimming, which `maxLength` (raw length) cannot say: a value padded
# past it is taken, so a generator's "one too long" case was accepted. The patterns bound the
# lengths themselves instead (each pattern's longest value is within the server's limit).
# A host name of two or three LDH labels, in lower case (at most 191 characters; the server
# takes up to 255, more labels, upper case, Unicode and a scheme, and normalises them; a
# generator needs only this).
FORM_DOMAIN_NAME: dict[str, Any] = {
    "type": "string",
    "pattern": f"^[{_SPACE}]*({_LABEL}\\.){{1,2}}[a-z]{{2,63}}[{_SPACE}]*$",
}
# An absolute http(s) URL of at most 2,033 characters (the server takes 2,048), or empty
# (which clears the page).
_FORM_HTTP_URL = _http_url(labels="{1,4}", path="{0,1700}")
FORM_PAGE_URL: dict[str, Any] = {
    "pattern": f"^[{_SPACE}]*({_FORM_HTTP_URL})?[{_SPACE}]*$",
}
