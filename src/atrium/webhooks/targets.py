"""Which URLs a webhook may target: http(s) only, and no private address unless allowed.

Checked twice: when a URL is registered (scheme, host, a literal IP or `localhost`), and before
every attempt, on the addresses the host resolves to then (a name can point anywhere later).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2048
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain"})


class TargetRefused(ValueError):
    """The URL may not be a webhook target; the message says why."""


def _refused_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_unspecified
        or address.is_reserved
    )


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    # The shorthand forms resolvers also accept (`127.1`, `0x7f000001`, `2130706433`).
    if host and all(char in "0123456789abcdefxABCDEFX." for char in host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def check_url(url: str, *, allow_private: bool) -> str:
    """The URL when it may be registered; TargetRefused otherwise (no DNS lookup here)."""
    if len(url) > MAX_URL_LENGTH:
        raise TargetRefused(f"must be at most {MAX_URL_LENGTH} characters")
    if not url.isprintable() or any(char.isspace() for char in url):
        raise TargetRefused("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError as exc:
        raise TargetRefused("is not a valid URL") from exc
    if parts.scheme not in ("http", "https"):
        raise TargetRefused("must be an http or https URL")
    if not host:
        raise TargetRefused("must name a host")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("must not carry credentials")
    if allow_private:
        return url
    literal = _literal(host)
    if host.rstrip(".").lower() in _LOCAL_NAMES or host.endswith(".localhost"):
        raise TargetRefused("must not target localhost")
    if literal is not None and _refused_address(literal):
        raise TargetRefused("must not target a private, loopback or link-local address")
    return url


async def check_resolved(url: str, *, allow_private: bool) -> None:
    """Before an attempt: every address the host resolves to now must be public."""
    if allow_private:
        return
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetRefused(f"the host could not be resolved ({exc})") from exc
    for info in infos:
        address = _literal(str(info[4][0]).split("%", 1)[0])
        if address is None or _refused_address(address):
            raise TargetRefused(f"the host resolves to a refused address ({info[4][0]})")
