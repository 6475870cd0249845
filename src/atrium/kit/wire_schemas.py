"""JSON Schema fragments for the OpenAPI document: the rules the parsers enforce, stated so that
generated clients and fuzzers send what the server takes.

Patterns are written for both dialects that read them: ECMA 262 (JSON Schema validators) and
Python's `re` (generators such as Hypothesis).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict

from atrium.kit.json_object import JsonObject


def integral(value: Any) -> Any:
    """A number with a zero fraction (64.0) as the int it is: strict models refuse coercion, but
    OpenAPI 3.1's JSON Schema counts such a number as an integer, so a client that sends one
    must not get a 400. Anything else passes on for the strict check. Put it after the
    field's constraints (`Annotated[int, Field(ge=1), BeforeValidator(integral)]`), or the
    OpenAPI document loses them."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def never_null(*names: str) -> Callable[[dict[str, Any]], None]:
    """A PUT model's `json_schema_extra`: the named properties shown as optional but never null
    (their `null` variant and their default left out), as `refuse_null` enforces."""

    def amend(schema: dict[str, Any]) -> None:
        properties = schema.get("properties", {})
        for name in names:
            field_schema = properties.get(name)
            if field_schema is None:
                continue
            variants = [v for v in field_schema.pop("anyOf", []) if v != {"type": "null"}]
            field_schema.pop("default", None)
            if len(variants) == 1:
                properties[name] = {**variants[0], **field_schema}

    return amend


def refuse_null(value: object) -> object:
    """A PUT model's `mode="before"` field validator: absent means "keep"; an explicit null is a
    mistake, not a request to clear."""
    if value is None:
        raise ValueError("must not be null")
    return value


# For a response model whose fields with a default are sent in every answer all the same: the
# response schema lists them as required (the request schema, if any, keeps them optional).
ALWAYS_SENT = ConfigDict(json_schema_serialization_defaults_required=True)

# What `str.strip()` removes (`str.isspace`): a value the server trims may be padded with these.
_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# What pydantic's `strip_whitespace` removes (Unicode White_Space: not U+001C-U+001F).
UNICODE_SPACE = r"\t-\r\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# `phpshort.listing.has_control_characters`: C0 controls and DEL.
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
) -> Callable[[JsonObject], None]:
    """`json_schema_extra` for a trimmed text field: the pattern of `trimmed_text` in place of
    the lengths, which the server counts after trimming."""

    def amend(schema: JsonObject) -> None:
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


def integer(minimum: int, maximum: int, **extra: Any) -> JsonObject:
    """An integer parameter the server reads from text (path, query, header)."""
    return {"type": "integer", "minimum": minimum, "maximum": maximum, **extra}


# `Idempotency-Key`: 1 to 200 printable characters (`str.isprintable`) of a header (Latin-1),
# the first and last not a space (HTTP strips those from a header value).
_PRINTABLE = r"\x21-\x7e\xa1-\xac\xae-\xff"
IDEMPOTENCY_KEY: JsonObject = {
    "pattern": f"^[{_PRINTABLE}]([ {_PRINTABLE}]{{0,198}}[{_PRINTABLE}])?$",
    "description": "1 to 200 printable characters; a retry with the same key and body replays "
    "the first answer.",
}


# A public http(s) URL the outbound checks (`public_targets.check_url`) take: a name of two or
# more labels ending in letters (so never an IP literal), an optional port and path. Narrower
# than what the server takes (any public host, percent-encoding, a query), so that every URL the
# document allows is accepted; the description says the rest.
_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"


_HTTP_URL = rf"https?://({_LABEL}\.)+[a-z]{{2,63}}(:[1-9][0-9]{{0,3}})?(/[A-Za-z0-9._~/-]*)?"
PUBLIC_URL: JsonObject = {
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
FORM_DOMAIN_NAME: JsonObject = {
    "type": "string",
    "pattern": f"^[{_SPACE}]*({_LABEL}\\.){{1,2}}[a-z]{{2,63}}[{_SPACE}]*$",
}


def _printable(excluded: str = "") -> str:
    """A character class's body: printable ASCII (`!` to `~`) but the characters `excluded`,
    as `\\xNN` ranges (the same in ECMA 262 and Python)."""
    codes = [code for code in range(0x21, 0x7F) if chr(code) not in excluded]
    ranges: list[tuple[int, int]] = []
    for code in codes:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "".join(
        f"\\x{low:02x}" if low == high else f"\\x{low:02x}-\\x{high:02x}" for low, high in ranges
    )


def _page_url() -> str:
    """Exactly the URLs `domains.rules.normalize_page_url` takes, as Python's `urlsplit` reads
    them: trimmed, 1 to 2,048 printable ASCII characters, scheme `http`/`https` in any case,
    `//`, then a network location whose host is not empty and whose port, if any, is 0-65535.

    The location is cut at the first `/`, `?` or `#`; its host follows the last `@`. `urlsplit`
    also refuses a location with only one of `[` and `]`, and one whose first `[…]` is not an
    IPv6 address (with a zone) or an IPvFuture; that check reads the whole location, user
    part included, so it is a second condition on the same text, written as a lookahead. A
    simpler alternative comes first (no brackets at all): a generator that draws from the
    pattern finds most values there, without the lookahead's filtering."""
    any_char, location = _printable(), _printable("/?#")

    def location_but(excluded: str) -> str:
        return f"[{_printable('/?#' + excluded)}]"

    h16 = "[0-9A-Fa-f]{1,4}"
    octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    ls32 = f"(?:{h16}:{h16}|{octet}(?:\\.{octet}){{3}})"
    ipv6 = (
        "(?:"
        + "|".join(
            [
                f"(?:{h16}:){{6}}{ls32}",
                f"::(?:{h16}:){{5}}{ls32}",
                f"(?:{h16})?::(?:{h16}:){{4}}{ls32}",
                f"(?:(?:{h16}:){{0,1}}{h16})?::(?:{h16}:){{3}}{ls32}",
                f"(?:(?:{h16}:){{0,2}}{h16})?::(?:{h16}:){{2}}{ls32}",
                f"(?:(?:{h16}:){{0,3}}{h16})?::{h16}:{ls32}",
                f"(?:(?:{h16}:){{0,4}}{h16})?::{ls32}",
                f"(?:(?:{h16}:){{0,5}}{h16})?::{h16}",
                f"(?:(?:{h16}:){{0,6}}{h16})?::",
            ]
        )
        + ")"
    )
    bracketed = f"(?:{ipv6}(?:%{location_but('%]')}+)?|v[0-9A-Fa-f]+\\.{location_but(']')}+)"
    port = (
        "(?::(?:0*(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}"
        "|[0-9]{1,4}))?)?"
    )
    # The bracket rule over the whole location: no bracket at all, or a `]` somewhere and the
    # first `[` opening a valid host that a `]` closes or the location's end ends.
    brackets = (
        f"(?:{location_but('[]')}*(?![{location}])|(?=[{location}]*\\])"
        f"{location_but('[')}*\\[{bracketed}(?:\\]|(?![{location}])))"
    )
    # The host after the last `@`: up to a `:` and a port, or from its first `[` to the next
    # `]` (or the end), then anything but `:` up to a `:` and a port.
    host = (
        f"(?:{location_but('[:@')}+{port}"
        f"|{location_but('[@')}*\\[{location_but(']@')}+(?:\\]{location_but(':@')}*{port})?)"
    )
    plain = f"(?:{location_but('[]')}*@)?{location_but('[]:@')}+{port}"
    general = f"(?!(?!{brackets}))(?:[{location}]*@)?{host}"
    return (
        f"(?![{any_char}]{{2049}})[Hh][Tt][Tt][Pp][Ss]?://(?:{plain}|{general})"
        f"(?:[/?#][{any_char}]*)?"
    )


# An absolute http(s) URL exactly as the server takes it (`_page_url`), or nothing but spaces
# (which clears the page). Its length is bounded inside the pattern (see above).
FORM_PAGE_URL: JsonObject = {
    "pattern": f"^[{_SPACE}]*(?:{_page_url()})?[{_SPACE}]*$",
}
