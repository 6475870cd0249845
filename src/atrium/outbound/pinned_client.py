"""`outbound_client`: an httpx client whose every connection goes to an address that was
checked (`outbound.public_targets`) and to nothing else, the name never resolved twice
(docs/design.md#outbound)."""

from __future__ import annotations

import asyncio
import functools
import ssl
import typing

import httpcore
import httpx

from atrium.outbound.public_targets import TargetRefused, ensure_public, literal_address
from atrium.outbound.resolver import IPAddress, LookupFailed, Resolver
from atrium.settings import Settings


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, resolving and checking every host before it connects.

    httpcore asks the backend for a TCP connection to the URL's host; this one resolves the
    host (`outbound.resolver`), refuses the connection when any address is not public, then
    connects to the addresses it checked, in order, and to nothing else.
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
