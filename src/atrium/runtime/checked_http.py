"""The HTTP client under the SDK client of an account's own provider: it connects only to
addresses the outbound rule allows (`outbound`, docs/design.md#outbound).

aiohttp asks `_CheckedResolver` for a host's addresses and connects to those very addresses,
so no second lookup can slip a private one in (DNS rebinding). A literal address in the URL is
never looked up: `providers.targets` checks the URL itself when each run starts. Redirects are
not followed (one to a literal address would go unchecked), and proxies from the environment
are ignored (a proxy would resolve the name itself).
"""

from __future__ import annotations

import functools
import socket
import ssl

import aiohttp
import httpx2
from aiohttp.abc import AbstractResolver, ResolveResult
from openai._constants import DEFAULT_CONNECTION_LIMITS
from openai._vendor.httpx_aiohttp import AiohttpTransport

from atrium.outbound.public_targets import ensure_public
from atrium.outbound.resolver import LookupFailed, Resolver
from atrium.runtime.model_http import AioHttpClient
from atrium.settings import Settings


def checked_http_client(settings: Settings) -> AioHttpClient:
    """An SDK HTTP client (aiohttp under httpx2, as `model_http`) held to the outbound rule;
    a refused address raises `TargetRefused` out of the request."""
    resolver = _CheckedResolver(
        Resolver.from_settings(settings), allow_private=settings.allow_private_targets
    )
    return AioHttpClient(transport=_transport(resolver), follow_redirects=False, trust_env=False)


class _CheckedResolver(AbstractResolver):
    """aiohttp's resolver: atrium's lookups (`outbound.resolver`), and only addresses the
    outbound rule allows. A host with any other raises `TargetRefused`, which aiohttp and the
    SDK pass on as it is (not an `OSError`: no retry), so the run's failure says why."""

    def __init__(self, resolver: Resolver, *, allow_private: bool) -> None:
        self._resolver = resolver
        self._allow_private = allow_private

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        try:
            addresses = await self._resolver.addresses(host)
        except LookupFailed as exc:  # aiohttp reports an OSError as a failed connection
            raise OSError(f"cannot resolve {host}: {exc}") from exc
        if not self._allow_private:
            ensure_public(host, addresses)
        return [
            {
                "hostname": host,
                "host": str(address),
                "port": port,
                "family": socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
            for address in addresses
        ]

    async def close(self) -> None:
        return None


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every checked client of the process: building one loads the CA
    bundle (tens of ms of CPU), which a client per provider would pay each time."""
    return httpx2.create_ssl_context(trust_env=False)


def _transport(resolver: _CheckedResolver) -> httpx2.AsyncBaseTransport:
    """The SDK's aiohttp transport (its limits), over a session whose connector resolves
    through `resolver`."""
    limits = DEFAULT_CONNECTION_LIMITS

    def session() -> aiohttp.ClientSession:
        # Made on the first request, on the event loop of the run that sends it.
        connector = aiohttp.TCPConnector(
            resolver=resolver,
            ssl=_tls(),
            limit=limits.max_connections or 0,
            keepalive_timeout=limits.keepalive_expiry,
        )
        return aiohttp.ClientSession(connector=connector)

    return AiohttpTransport(verify=_tls(), trust_env=False, limits=limits, client=session)
