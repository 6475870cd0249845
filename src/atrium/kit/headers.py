"""Headers a user gives for outbound requests (MCP servers, model providers): what a name and a
value may be. Their values are secrets, stored with `secrets_at_rest`."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from atrium.kit.json_object import JsonObject

MAX_HEADERS: Final = 32
MAX_HEADER_VALUE: Final = 8_192
# RFC 9110 `token`.
HEADER_NAME: Final = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$")
# Headers that would change how a request travels: set by the HTTP client, never by a user.
TRANSPORT_HEADERS: Final = frozenset(
    {
        "connection",
        "content-length",
        "host",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
# What `check_headers` takes, for the OpenAPI document.
HEADERS_SCHEMA: Final[JsonObject] = {
    "maxProperties": MAX_HEADERS,
    "propertyNames": {"pattern": HEADER_NAME.pattern},
    "additionalProperties": {
        "type": "string",
        "pattern": f"^[\\x20-\\x7e]{{1,{MAX_HEADER_VALUE}}}$",
    },
}


def check_headers(headers: Mapping[str, str], *, where: str, reserved: frozenset[str]) -> None:
    """ValueError naming the first header of `headers` (`where` is how the message names the
    map, e.g. `tools[0].headers`) that is not a token name with a printable ASCII value, is
    one of `reserved` (lower case), or repeats a name in another case."""
    if len(headers) > MAX_HEADERS:
        raise ValueError(f"{where} may hold at most {MAX_HEADERS} headers")
    seen: set[str] = set()
    for name, value in headers.items():
        lowered = name.lower()
        if not HEADER_NAME.match(name):
            raise ValueError(f"{where}: {name[:100]!r} is not a header name")
        if lowered in reserved:
            raise ValueError(f"{where}: {name} is set by atrium itself")
        if lowered in seen:
            raise ValueError(f"{where}: {name} appears twice")
        seen.add(lowered)
        if not value or len(value) > MAX_HEADER_VALUE or not value.isascii():
            raise ValueError(f"{where}.{name} must be 1-{MAX_HEADER_VALUE} ASCII characters")
        if not value.isprintable():
            raise ValueError(f"{where}.{name} must not contain control characters")
