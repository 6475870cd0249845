"""Outermost middleware: request id, headers every response carries, metrics, last-resort 500.

A failure that escapes the app becomes the one error body with status 500 (no trace leaves the
process; the trace is logged with the request id), carrying the same headers as any response.
"""

from __future__ import annotations

import logging
import re
import secrets
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from atrium.errors import InternalError
from atrium.http.asgi import add_headers, extra_headers, header, send_error, state
from atrium.observability.metrics import Metrics

log = logging.getLogger("atrium.http")
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def route_template(scope: Scope) -> str:
    """`/api/v1/domains/{id}` for `/api/v1/domains/5`: ids never become label values."""
    if "endpoint" not in scope:
        return "unmatched"
    params = {str(value): name for name, value in scope.get("path_params", {}).items()}
    segments = [f"{{{params[s]}}}" if s in params else s for s in scope["path"].split("/")]
    return "/".join(segments)


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

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
        except Exception:
            log.exception("unhandled error (request_id=%s)", request_id)
            if not response_started:
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
        method = scope["method"]
        template = route_template(scope)
        self.metrics.requests.labels(method, template, str(status)).inc()
        self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)
