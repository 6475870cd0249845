"""Outermost middleware: request id, headers every response carries, metrics, last-resort 500.

A failure that escapes the app becomes the one error body with status 500 (no trace leaves the
process; the trace is logged with the request id), carrying the same headers as any response.
"""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections.abc import Sequence

from fastapi.routing import iter_route_contexts
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from atrium.errors import Busy, InternalError
from atrium.http.asgi import add_headers, extra_headers, header, send_error, state
from atrium.observability.metrics import Metrics

log = logging.getLogger("atrium.http")
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
# PostgreSQL's `too_many_connections` (its own `max_connections`, or a role's connection limit):
# the server refused a new connection for load, as a full pool does in the process.
_TOO_MANY_CONNECTIONS = "53300"


def overloaded(error: Exception) -> bool:
    """Whether a request failed because no database connection could be had for load: the
    pool stayed busy past its timeout, or PostgreSQL refused one more connection."""
    if isinstance(error, PoolTimeout):
        return True
    return (
        isinstance(error, DBAPIError)
        and getattr(error.orig, "sqlstate", None) == _TOO_MANY_CONNECTIONS
    )


# Label values must come from a fixed set: each new value is a new Prometheus series that the
# process keeps forever, and labels taken from paths let 2,000 random requests grow /metrics
# from 82 KB to 11.4 MB (docs/decisions/0020-metrics-labels-from-route-templates.md).
UNMATCHED = "<unmatched>"
OTHER_METHOD = "<other>"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"})


class RouteTemplates:
    """The route label of a request: the template of the route that answered it.

    `/api/v1/domains/{id}` for `/api/v1/domains/5`; a mounted app (the dashboard's files, the
    docs' assets) is labelled with its mount path; a request no route matched (an unknown path,
    an answer of the gateway before routing) with `UNMATCHED`. The templates are the app's own
    (FastAPI's `iter_route_contexts` gives each route's full path through included routers),
    looked up by the endpoint routing put in the scope: nothing of the request's path is used.
    """

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self._routes = routes
        self._by_endpoint: dict[int, str] | None = None

    def label(self, scope: Scope) -> str:
        endpoint = scope.get("endpoint")
        if endpoint is None:
            return UNMATCHED
        if self._by_endpoint is None:  # on the first request: every route has been added
            self._by_endpoint = self._templates()
        return self._by_endpoint.get(id(endpoint), UNMATCHED)

    def _templates(self) -> dict[int, str]:
        templates: dict[int, str] = {}
        for context in iter_route_contexts(self._routes):
            route, path = context.original_route, context.path
            # Routing puts a mount's app in the scope as its endpoint, a route's function.
            endpoint = route.app if isinstance(route, Mount) else getattr(route, "endpoint", None)
            if endpoint is not None and path:
                templates.setdefault(id(endpoint), path)
        return templates


def method_label(scope: Scope) -> str:
    method: str = scope["method"]
    return method if method in _METHODS else OTHER_METHOD


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, *, metrics: Metrics, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = RouteTemplates(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = header(scope, b"x-request-id")
        request_id = (
            incoming if incoming and _SAFE_REQUEST_ID.match(incoming) else secrets.token_hex(12)
        )
        state(scope)["request_id"] = request_id
        headers = extra_headers(scope)
        headers["X-Request-ID"] = request_id
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                response_started = True
                status = message["status"]
                add_headers(message, headers)
                self._observe(scope, status, started)
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as error:
            if response_started:
                log.exception("error after the response started (request_id=%s)", request_id)
            elif overloaded(error):
                # Overloaded, not broken: a 503 with Retry-After lets clients back off and retry.
                log.warning("no database connection to be had (request_id=%s)", request_id)
                busy = Busy(
                    "the server is busy; retry shortly",
                    details={"request_id": request_id},
                    headers={"Retry-After": "1"},
                )
                await send_error(scope, send_with_headers, busy)
            else:
                log.exception("unhandled error (request_id=%s)", request_id)
                await send_error(
                    scope,
                    send_with_headers,
                    InternalError("internal error", details={"request_id": request_id}),
                )
        finally:
            log.debug(
                "%s %s -> %s in %.1f ms (request_id=%s)",
                scope["method"],
                scope["path"],
                status,
                (time.perf_counter() - started) * 1000,
                request_id,
            )

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        method = method_label(scope)
        template = self.templates.label(scope)
        self.metrics.requests.labels(method, template, str(status)).inc()
        self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)
