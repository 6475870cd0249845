"""Outbound requests (docs/design.md#outbound): only to public addresses, each connection
pinned to the address that was checked.

Two checks, one rule (`is_public`: `ipaddress`'s `is_global`, with the embedded IPv4 address of
IPv4-mapped, 6to4 and NAT64 forms judged in its place, and multicast and site-local refused):

- `check_url`, when a URL is registered (a webhook endpoint, a run's `webhook_url`, an MCP
  server): scheme, host, no credentials; a literal address in any spelling a resolver accepts
  (`127.1`, `0x7f000001`, `[::ffff:7f00:1]`) and the `localhost` names are judged at once. Other
  names are not looked up then: where a name points is only known when connecting.
- `outbound_client`, for sending: an httpx client whose network backend resolves the host
  itself, refuses the connection if any address it got is not public, and connects to one of
  those very addresses. httpx never resolves the name again, so a DNS answer that changes
  between the check and the connection (DNS rebinding) cannot slip a private address in.
  httpcore hands the original name to `start_tls` separately (`server_hostname`), and the
  request keeps it in its `Host` header: TLS still verifies the certificate of the name.

`ATRIUM_ALLOW_PRIVATE_TARGETS=true` lifts the address rule (local development, receivers on
your own network); connections are still made to the addresses the backend resolved.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
import ssl
import typing

import httpcore
import httpx
import idna

from atrium.kit.dns import IPAddress, LookupFailed, Resolver, parse_address
from atrium.settings import Settings

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


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, resolving and checking every host before it connects.

    httpcore asks the backend for a TCP connection to the URL's host; this one resolves the
    host (`kit.dns`), refuses the connection when any address is not public, then connects to
    the addresses it checked, in order, and to nothing else.
    """

    def __init__(self, resolver: Resolver, *, allow_private: bool) -> None:
        self._resolver = resolver
        self._allow_private = allow_private
        self._inner = httpcore.AnyIOBackend()

    async def addresses(self, host: str, within: float | None) -> list[IPAddress]:
        """The checked addresses to connect to for `host`, looked up within `within` seconds."""
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                async with asyncio.timeout(within):
                    addresses = await self._resolver.addresses(host)
            except TimeoutError as exc:
                raise httpcore.ConnectTimeout(f"looking up {host} timed out") from exc
            except LookupFailed as exc:
                raise httpcore.ConnectError(str(exc)) from exc
        if not self._allow_private:
            ensure_public(host, addresses)
        return addresses

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109  (httpcore's interface)
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        error: Exception | None = None
        for address in await self.addresses(host, timeout):
            try:
                return await self._inner.connect_tcp(
                    str(address),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
        assert error is not None  # `addresses` is never empty
        raise error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109  (httpcore's interface)
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise TargetRefused("outbound requests never use a Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@functools.cache
def _context(*, verify: bool) -> ssl.SSLContext:
    """One TLS context per process and mode. Building one loads certifi's CA bundle, 28-40 ms
    of CPU, which a context per client would spend at each start of the webhook sender and for
    each MCP server of every run (docs/decisions/0018-one-tls-context-per-process.md). Sharing
    it is safe: httpcore only sets its ALPN protocols on each connection, to the same value for
    every client here (HTTP/1.1 only)."""
    return httpx.create_ssl_context(verify=verify, trust_env=False)


class _PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport over a connection pool that uses `PinnedBackend`.

    httpx's transport takes no network backend, so its pool (its only state, httpx 0.28.1,
    pinned) is replaced by one built the same way around ours.
    """

    def __init__(
        self, backend: PinnedBackend, *, verify: ssl.SSLContext | bool, limits: httpx.Limits
    ) -> None:
        context = verify if isinstance(verify, ssl.SSLContext) else _context(verify=verify)
        super().__init__(verify=context, trust_env=False, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=backend,
        )


def outbound_client(
    settings: Settings,
    *,
    timeout: float | httpx.Timeout,
    max_connections: int | None = None,
    follow_redirects: bool = False,
    resolver: Resolver | None = None,
    verify: ssl.SSLContext | bool = True,
) -> httpx.AsyncClient:
    """An httpx client for requests to URLs that users registered (webhooks, MCP servers).

    Every connection it opens, redirects included, goes through the check above and is pinned
    to a checked address. Proxies from the environment are ignored: a proxy would resolve the
    name itself. A refused connection raises `TargetRefused` out of the request.
    """
    limits = httpx.Limits(max_connections=max_connections or 100, max_keepalive_connections=20)
    backend = PinnedBackend(
        resolver or Resolver.from_settings(settings),
        allow_private=settings.allow_private_targets,
    )
    return httpx.AsyncClient(
        transport=_PinnedTransport(backend, verify=verify, limits=limits),
        timeout=timeout,
        follow_redirects=follow_redirects,
        trust_env=False,
    )
