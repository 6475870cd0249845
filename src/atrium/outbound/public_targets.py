"""Which targets outbound requests may reach: `is_public`, the one address rule, and
`check_url`, the check of a URL when it is registered (docs/design.md#outbound). The rule is
applied again to every connection by `outbound.pinned_client`."""

from __future__ import annotations

import ipaddress
import re
import socket
import typing

import httpx
import idna

from atrium.outbound.resolver import IPAddress, parse_address

SETTING = "ATRIUM_ALLOW_PRIVATE_TARGETS"
MAX_URL_LENGTH = 2048
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})
# A DNS name as resolvers take it (IDNA-encoded): labels of letters, digits, `-` and `_`.
_HOST_NAME = re.compile(
    r"^(?=.{1,253}\.?$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*"
    r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$"
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Local-use NAT64 (RFC 8215) and the deprecated IPv4-compatible form: never public targets.
_NEVER = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("::/96"))
_NUMERIC_HOST = frozenset("0123456789abcdefxABCDEFX.")


class TargetRefused(ValueError):
    """The URL or address may not be an outbound target; the message says why."""


def _allowing() -> str:
    return f"{SETTING}=true allows it"


def is_public(address: IPAddress) -> bool:
    """True for a globally routable unicast address: the only kind outbound requests reach."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
        if address.is_site_local or any(address in network for network in _NEVER):
            return False
    return address.is_global and not address.is_multicast


def literal_address(host: str) -> IPAddress | None:
    """The address a host names literally, in any form a resolver accepts; None for a name."""
    # httpx keeps a zone's `%` percent-encoded (`fe80::1%25eth0`).
    address = parse_address(host.strip("[]").replace("%25", "%"))
    if address is not None:
        return address
    # The shorthand forms `inet_aton` (and so getaddrinfo) also takes: `127.1`, `0x7f.1`,
    # `2130706433`, `017700000001`.
    if host and set(host) <= _NUMERIC_HOST:
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def ensure_public(host: str, addresses: typing.Iterable[IPAddress]) -> None:
    """TargetRefused naming the first address of `host` that is not public."""
    for address in addresses:
        if not is_public(address):
            shown = host if str(address) == host else f"{host} ({address})"
            raise TargetRefused(f"{shown} is not a public address; {_allowing()}")


def _host_of(url: httpx.URL) -> str:
    """The URL's host as httpx reads it: it decodes a host whose first label is an A-label
    (`xn--…`) with `idna`, whose error on a malformed one (`xn--`) is no `InvalidURL`."""
    try:
        return url.host
    except UnicodeError:  # idna.IDNAError and its kinds
        raise TargetRefused("is not a valid URL (host)") from None


def _is_host_name(raw_host: str) -> bool:
    """A name a resolver takes: LDH labels (httpx takes any characters in a host, such as
    `a.example*`), each A-label (`xn--…`) decoding to Unicode, wherever it stands."""
    if not _HOST_NAME.match(raw_host):
        return False
    for label in raw_host.rstrip(".").split("."):
        if label[:4].lower() == "xn--":
            try:
                idna.decode(label)
            except UnicodeError:
                return False
    return True


def check_url(url: str, *, allow_private: bool) -> str:
    """The URL when it may be registered as an outbound target; TargetRefused otherwise.

    No DNS lookup here: names are judged when connecting. The host is read the way httpx reads
    it when sending, so the two cannot disagree about which host a URL names.
    """
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"must be at most {MAX_URL_LENGTH} characters")
    if not url.isprintable() or any(char.isspace() for char in url):
        raise TargetRefused("must not contain spaces or control characters")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise TargetRefused("is not a valid URL") from exc
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise TargetRefused("is not a valid URL (port)")
    if parsed.scheme not in ("http", "https"):
        raise TargetRefused("must be an http or https URL")
    host = _host_of(parsed)
    if not host:
        raise TargetRefused("must name a host")
    if parsed.userinfo:
        raise TargetRefused("must not carry credentials")
    raw_host = parsed.raw_host.decode("ascii", "replace")
    if literal_address(host) is None and not _is_host_name(raw_host):
        raise TargetRefused("is not a valid URL (host)")
    if allow_private:
        return url
    if host.rstrip(".") in _LOCAL_NAMES or host.rstrip(".").endswith(".localhost"):
        raise TargetRefused(f"must not target localhost; {_allowing()}")
    address = literal_address(host)
    if address is not None and not is_public(address):
        raise TargetRefused(f"must not target {host}: it is not a public address; {_allowing()}")
    return url
