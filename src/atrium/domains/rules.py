"""Validation of domain fields (docs/design.md#domains): the name normalisation and the page
URLs."""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

import idna

from atrium.errors import InvalidParameter

MAX_NAME_LENGTH = 255
MAX_URL_LENGTH = 2048
# Anything longer cannot become a valid name; it is refused before IDNA does any work.
_MAX_RAW_NAME = 1024
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://")
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_URL_CHARS = re.compile(r"^[\x21-\x7e]+$")


def _invalid_name(message: str = "name must be a valid domain name") -> InvalidParameter:
    return InvalidParameter("name", message)


def normalize_name(raw: str) -> str:
    """`  HTTPS://Bücher.Example/ ` → `xn--bcher-kva.example`, or a 400 on `name`.

    Trimmed and lower-cased; a scheme and trailing slashes (and a final root dot) are dropped;
    Unicode labels become punycode (IDNA 2008 with UTS #46 mapping). The result must be a host
    name of at least two LDH labels, not an IP address, at most 255 characters.
    """
    value = raw.strip().lower()
    if not value:
        raise _invalid_name("name is required")
    if len(value) > _MAX_RAW_NAME:
        raise _invalid_name(f"name must be at most {MAX_NAME_LENGTH} characters")
    value = _SCHEME.sub("", value, count=1).rstrip("/")
    if value.endswith("."):
        value = value[:-1]
    if not value:
        raise _invalid_name()
    try:
        ascii_name = value if value.isascii() else idna.encode(value, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise _invalid_name(f"name is not a valid internationalised domain name: {exc}") from exc
    if len(ascii_name) > MAX_NAME_LENGTH:
        raise _invalid_name(f"name must be at most {MAX_NAME_LENGTH} characters")
    labels = ascii_name.split(".")
    if len(labels) < 2 or not all(_LABEL.match(label) for label in labels):
        raise _invalid_name()
    if labels[-1].isdigit() or _is_ip(ascii_name):
        raise _invalid_name("name must be a domain name, not an IP address")
    if any(label.startswith("xn--") for label in labels):
        try:  # a punycode label must decode to a valid Unicode label
            idna.decode(ascii_name)
        except (idna.IDNAError, UnicodeError) as exc:
            raise _invalid_name(f"name has an invalid punycode label: {exc}") from exc
    return ascii_name


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def normalize_page_url(parameter: str, raw: str | None) -> str | None:
    """An absolute http(s) URL, or None for an empty value (which clears the page)."""
    if raw is None:
        return None
    value = raw.strip()
    if not value:
        return None
    message = f"{parameter} must be an absolute http or https URL"
    if len(value) > MAX_URL_LENGTH:
        raise InvalidParameter(
            parameter, f"{parameter} must be at most {MAX_URL_LENGTH} characters"
        )
    # Redirects put the URL in a Location header: printable ASCII only (percent-encode the rest).
    if not _URL_CHARS.match(value):
        raise InvalidParameter(parameter, message + " (printable ASCII, percent-encoded)")
    try:
        parts = urlsplit(value)
        _ = parts.port  # raises on a malformed port
    except ValueError as exc:
        raise InvalidParameter(parameter, message) from exc
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise InvalidParameter(parameter, message)
    return value


def domain_url(scheme: str, name: str) -> str:
    """The `url` field: the domain as a link, `https://` + name by default."""
    return f"{scheme}://{name}"
