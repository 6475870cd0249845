"""The one place where errors become HTTP responses (docs/design.md#errors): ours and the
framework's."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from atrium.errors import AppError, error_body
from atrium.http.validation_messages import validation_message

_CODES = {
    400: "INVALID_PARAMETER",
    401: "UNAUTHORIZED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: Mapping[str, Any] | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        error_body(code, message, details), status_code=status_code, headers=dict(headers or {})
    )


def app_error_response(error: AppError) -> JSONResponse:
    return JSONResponse(error.body(), status_code=error.status_code, headers=error.headers)


def parameter_from_loc(loc: Sequence[Any], error_type: str = "") -> str:
    """`("body", "config", "temperature")` → `config.temperature`; bad JSON → `body`."""
    if error_type == "json_invalid" or len(loc) <= 1:
        return "body"
    parts = [str(part) for part in loc[1:]]
    return ".".join(parts)


async def _app_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return app_error_response(exc)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first: dict[str, Any] = dict(errors[0]) if errors else {}
    parameter = parameter_from_loc(first.get("loc", ("body",)), first.get("type", ""))
    return error_response(
        400, "INVALID_PARAMETER", validation_message(parameter, first), {"parameter": parameter}
    )


_METHOD_ORDER = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def _path_methods(app: FastAPI) -> list[tuple[re.Pattern[str], str]]:
    """(path regex, `Allow` value) of every documented path, built once per app."""
    table: list[tuple[re.Pattern[str], str]] | None = getattr(app.state, "path_methods", None)
    if table is None:
        table = []
        for path, item in app.openapi().get("paths", {}).items():
            methods = {method.upper() for method in item if method.upper() in _METHOD_ORDER}
            if "GET" in methods:
                methods.add("HEAD")  # Starlette answers HEAD wherever GET is routed
            regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path))
            allow = ", ".join(sorted(methods, key=_METHOD_ORDER.index))
            table.append((re.compile(regex + "$"), allow))
        app.state.path_methods = table
    return table


def allowed_methods(request: Request) -> str | None:
    """Every method the request's path answers, for the `Allow` of a 405 (RFC 9110 §15.5.6).

    FastAPI makes one route per endpoint, and the framework's 405 names only the methods of the
    route whose path matched first: `Allow: GET` on a path that also takes POST and DELETE. The
    OpenAPI document lists them all (and is what clients and fuzzers compare `Allow` with)."""
    for regex, allow in _path_methods(request.app):
        if regex.match(request.url.path):
            return allow
    return None


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    status = exc.status_code
    headers = exc.headers
    code = _CODES.get(status, "INTERNAL_ERROR" if status >= 500 else "INVALID_PARAMETER")
    details: dict[str, Any] = {}
    if status == 404:
        message = "not found"
    elif status == 405:
        message = "method not allowed"
        allow = allowed_methods(request)
        if allow is not None:
            headers = {**(headers or {}), "Allow": allow}
    elif status == 400:
        # The framework's own 400 is a body it could not parse (form or JSON).
        message, details = "request body could not be parsed", {"parameter": "body"}
    else:
        message = str(exc.detail)
    return error_response(status, code, message, details, headers=headers)


def install(app: FastAPI) -> None:
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
