"""Exceptions of the client: one per error code of the API, plus transport and stream failures.

Every error response of the service is `{"error": {"code", "message", "details"}}`; `APIError`
carries those three and the HTTP status. A 429 is a `RateLimitError`, which also tells when the
window resets (`reset_at`) and how long the server asked to wait (`retry_after`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = [
    "APIConnectionError",
    "APIError",
    "AtriumError",
    "AuthenticationError",
    "ChecksumMismatchError",
    "ConfigurationError",
    "ConflictError",
    "InvalidParameterError",
    "MethodNotAllowedError",
    "NotFoundError",
    "PayloadTooLargeError",
    "RateLimitError",
    "ServerError",
    "StreamError",
    "UnsupportedMediaTypeError",
    "WaitTimeoutError",
]


class AtriumError(Exception):
    """Base class of every error the client raises."""


class ConfigurationError(AtriumError):
    """The client is missing something it needs, such as an API key."""


class APIConnectionError(AtriumError):
    """The server could not be reached, or the connection failed mid-request."""


class StreamError(AtriumError):
    """A run's event stream dropped and could not be resumed within the reconnect budget."""

    def __init__(self, message: str, *, run_id: str, last_event_id: int | None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.last_event_id = last_event_id


class WaitTimeoutError(AtriumError, TimeoutError):
    """`runs.wait(..., timeout=...)` ran out of time before the run finished; `waited` is
    how long it waited, in seconds (the message says it too)."""

    def __init__(self, message: str, *, run_id: str, waited: float | None = None) -> None:
        if waited is not None:
            message = f"{message} after waiting {waited:.1f} s"
        super().__init__(message)
        self.run_id = run_id
        self.waited = waited


class ChecksumMismatchError(AtriumError):
    """A downloaded artifact's SHA-256 differs from the one the server announced."""


class APIError(AtriumError):
    """An error response: HTTP `status_code`, machine-readable `code`, `message`, `details`."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        code: str,
        details: dict[str, Any] | None = None,
        request_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.code = code
        self.details: dict[str, Any] = details or {}
        self.request_id = request_id
        self.headers: dict[str, str] = headers or {}

    @property
    def parameter(self) -> str | None:
        """The parameter the error is about (`details.parameter`: a 400's invalid parameter,
        a 404's unknown id such as `run_id`), when the server named one."""
        value = self.details.get("parameter")
        return value if isinstance(value, str) else None

    def __str__(self) -> str:
        return f"{self.status_code} {self.code}: {self.message}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status_code={self.status_code}, code={self.code!r}, "
            f"message={self.message!r}, details={self.details!r})"
        )


class InvalidParameterError(APIError):
    """400: a parameter is missing or invalid; `parameter` names it (dotted when nested)."""


class AuthenticationError(APIError):
    """401: the API key is missing, unknown or revoked."""


class NotFoundError(APIError):
    """404: no such record for this account; `parameter` names the id (e.g. `run_id`)."""


class MethodNotAllowedError(APIError):
    """405."""


class ConflictError(APIError):
    """409: the request conflicts with the record's state (e.g. cancelling a finished run)."""


class PayloadTooLargeError(APIError):
    """413."""


class UnsupportedMediaTypeError(APIError):
    """415."""


class RateLimitError(APIError):
    """429: the key's budget for this group is spent until `reset_at`."""

    def __init__(
        self,
        message: str,
        *,
        reset_at: datetime | None = None,
        retry_after: float | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.reset_at = reset_at
        self.retry_after = retry_after
        self.limit = limit


class ServerError(APIError):
    """5xx."""


STATUS_ERRORS: dict[int, type[APIError]] = {
    400: InvalidParameterError,
    401: AuthenticationError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    413: PayloadTooLargeError,
    415: UnsupportedMediaTypeError,
}
