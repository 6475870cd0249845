"""Served domains: a request whose Host is a stored domain is redirected to the domain's pages.

`/` goes to `index_page`, any other path to `not_found_page` (status from
`ATRIUM_DOMAIN_REDIRECT_STATUS`, `Cache-Control: no-store`); with no target, a plain 404 page.
Only verified domains are served (`domains.verification`), and the service's own paths (the API
groups, the dashboard, the docs, health and metrics) are never redirected, whatever the Host: a
domain's owner cannot capture the API or the dashboard of visitors who reach atrium by its name.

Requests for the service itself never touch the database: its own host (from
`ATRIUM_PUBLIC_URL`), `localhost`, IP literals and hosts that cannot be domain names pass
straight through. Every other host is looked up on each request, by the unique index on
`domains.name`; nothing is cached, so a domain created, changed or deleted through any process
is served accordingly on the next request.
"""

from __future__ import annotations

import functools
import ipaddress
import posixpath
import re

from starlette.types import ASGIApp, Receive, Scope, Send

from atrium.db.engine import Database
from atrium.domains import repository
from atrium.domains.service import service_host
from atrium.http.asgi import header
from atrium.http.groups import GROUPS

_HOST = re.compile(r"^(?=.{1,255}$)[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$")
_NOT_FOUND_PAGE = (
    b'<!doctype html><html><head><meta charset="utf-8"><title>404 Not Found</title></head>'
    b"<body><h1>404 Not Found</h1></body></html>"
)


# The service's own paths (and everything under them), never redirected. `/api` and `/v1` hold
# the three groups; the others are FastAPI's documents, the dashboard and the probes.
RESERVED_PATHS = tuple(
    sorted(
        {"/api", *(group.prefix for group in GROUPS)}
        | {"/dashboard", "/docs", "/redoc", "/openapi.json", "/metrics", "/healthz", "/readyz"}
    )
)


def is_reserved(path: str) -> bool:
    """Whether `path` is, or lies under, one of the service's own paths. Judged generously
    (case, repeated slashes, dot segments): a false "reserved" only sends the request on to
    the app, which answers 404 for what it does not serve."""
    candidates = {path, posixpath.normpath(re.sub("/{2,}", "/", path)).lower()}
    return any(
        candidate == reserved or candidate.startswith(reserved + "/")
        for candidate in candidates
        for reserved in RESERVED_PATHS
    )


def request_host(scope: Scope) -> str | None:
    """The Host header without port or final dot, lower-cased; None for IPv6 literals."""
    value = header(scope, b"host")
    if not value:
        return None
    value = value.strip().lower()
    if value.startswith("["):
        return None
    return value.rsplit(":", 1)[0].rstrip(".") if ":" in value else value.rstrip(".")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class ServedDomainsMiddleware:
    """Redirects requests for stored domains; everything else goes on to the API."""

    def __init__(self, app: ASGIApp, *, db: Database, public_url: str, status: int) -> None:
        self.app = app
        self.db = db
        self.status = status
        own = service_host(public_url)
        self.own_hosts = frozenset(h for h in (own, "localhost") if h)

    def could_be_domain(self, host: str | None) -> bool:
        if host is None or host in self.own_hosts or not _HOST.match(host):
            return False
        return not _is_ip(host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = request_host(scope)
        # The host first: for the service's own host (every API request) that is a set lookup,
        # where `is_reserved` normalizes the path (a regex and `normpath` per request).
        if host is None or not self.could_be_domain(host) or is_reserved(scope["path"]):
            await self.app(scope, receive, send)
            return
        pages = await self.db.point_read(functools.partial(repository.pages_for_host, host=host))
        if pages is None:
            await self.app(scope, receive, send)
            return
        index_page, not_found_page = pages
        target = index_page if scope["path"] == "/" else not_found_page
        await self._respond(scope, send, target)

    async def _respond(self, scope: Scope, send: Send, target: str | None) -> None:
        # The request-context middleware outside adds X-Request-ID, as on any response.
        headers = [(b"cache-control", b"no-store")]
        if target is not None:
            status, body = self.status, b""
            headers.append((b"location", target.encode("latin-1")))
        else:
            status, body = 404, _NOT_FOUND_PAGE
            headers.append((b"content-type", b"text/html; charset=utf-8"))
        headers.append((b"content-length", str(len(body)).encode("ascii")))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if scope["method"] == "HEAD":
            body = b""
        await send({"type": "http.response.body", "body": body})
