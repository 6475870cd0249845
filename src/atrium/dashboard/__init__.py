"""The web dashboard at `/dashboard`: static pages whose scripts call the public API.

The pages hold no data: the browser fetches everything from the API groups with the key the
user typed (kept in `sessionStorage`), so the dashboard shows exactly what API clients see and
needs no server-side session. It sits outside the API groups, so the gateway does not guard it;
a strict Content-Security-Policy keeps the pages to their own scripts and the same origin.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

STATIC_DIR = Path(__file__).parent / "static"
PREFIX = "/dashboard"

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    # Revalidate on every load (ETag makes that cheap) so an upgrade is seen at once.
    "Cache-Control": "no-cache",
}


class SecurityHeaders:
    """ASGI wrapper adding `SECURITY_HEADERS` to every response of the wrapped app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _to_index() -> RedirectResponse:
    # Relative, so it stays right behind a proxy that serves atrium under a path prefix.
    return RedirectResponse("dashboard/", status_code=307, headers=SECURITY_HEADERS)


def mount(app: FastAPI) -> None:
    """Serve the dashboard's files under `/dashboard/` (and redirect `/dashboard` there)."""
    app.add_api_route(PREFIX, _to_index, methods=["GET", "HEAD"], include_in_schema=False)
    static = StaticFiles(directory=STATIC_DIR, html=True)
    app.mount(PREFIX, SecurityHeaders(static), name="dashboard")
