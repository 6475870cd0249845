"""Small helpers for the pure-ASGI middleware (which must not buffer streamed responses)."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import Message, Scope, Send

from atrium.errors import AppError
from atrium.http.error_handlers import app_error_response


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def state(scope: Scope) -> dict[str, Any]:
    """The request's `state` dict (what `request.state` reads), created if missing."""
    return scope.setdefault("state", {})  # type: ignore[no-any-return]


def extra_headers(scope: Scope) -> dict[str, str]:
    """Headers that every response of this request must carry (request id, rate limits)."""
    return state(scope).setdefault("response_headers", {})  # type: ignore[no-any-return]


def add_headers(message: Message, headers: dict[str, str]) -> None:
    if message["type"] == "http.response.start" and headers:
        mutable = MutableHeaders(scope=message)
        for key, value in headers.items():
            mutable[key] = value


async def send_error(scope: Scope, send: Send, error: AppError) -> None:
    response = app_error_response(error)
    for key, value in extra_headers(scope).items():
        response.headers[key] = value
    await response(scope, _no_receive, send)


async def _no_receive() -> Message:  # pragma: no cover - JSON responses never read the body
    return {"type": "http.disconnect"}
