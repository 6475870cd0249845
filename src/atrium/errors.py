"""The one error model: typed application errors and the JSON body they become.

Services raise `AppError` subclasses: the generic ones here, or a feature's named subclass of one
(`domains/errors.py`: `DomainNameTaken(InvalidParameter)`), which keeps its parent's status and
code. `atrium.http.error_handlers` is the only place that turns errors (ours and the
framework's) into HTTP responses; `atrium.http.openapi.error_responses` lists a route's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class AppError(Exception):
    """An error with a status, a machine-readable code and diagnostic details."""

    status_code = 500
    code = "INTERNAL_ERROR"

    def __init__(
        self,
        message: str,
        *,
        details: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.headers: dict[str, str] = dict(headers or {})

    def body(self) -> dict[str, Any]:
        return error_body(self.code, self.message, self.details)


class InvalidParameter(AppError):
    """A missing or invalid parameter; `details.parameter` names it (dotted when nested)."""

    status_code = 400
    code = "INVALID_PARAMETER"

    def __init__(self, parameter: str, message: str, **details: Any) -> None:
        super().__init__(message, details={"parameter": parameter, **details})
        self.parameter = parameter


class Unauthorized(AppError):
    status_code = 401
    code = "UNAUTHORIZED"


class NotFound(AppError):
    status_code = 404
    code = "NOT_FOUND"


class MethodNotAllowed(AppError):
    status_code = 405
    code = "METHOD_NOT_ALLOWED"


class Conflict(AppError):
    status_code = 409
    code = "CONFLICT"


class PayloadTooLarge(AppError):
    status_code = 413
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(AppError):
    status_code = 415
    code = "UNSUPPORTED_MEDIA_TYPE"


class RateLimited(AppError):
    status_code = 429
    code = "RATE_LIMITED"


class Busy(AppError):
    """The process had no database connection free within `ATRIUM_DB_POOL_TIMEOUT_SECONDS`:
    a burst beyond what it can serve. Retrying shortly succeeds (`Retry-After`)."""

    status_code = 503
    code = "BUSY"


class InternalError(AppError):
    status_code = 500
    code = "INTERNAL_ERROR"


def _printable(value: Any) -> Any:
    """Echoed input can hold lone surrogates (JSON `"\\ud800"`), which UTF-8 can not encode."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, Mapping):
        return {_printable(key): _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value


def error_body(code: str, message: str, details: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`{"error": {"code", "message", "details"}}`: the body of every error response."""
    return {
        "error": {
            "code": code,
            "message": _printable(message),
            "details": _printable(dict(details or {})),
        }
    }
