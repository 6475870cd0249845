"""The errors of the webhooks group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class WebhookNotFound(NotFound):
    """The account has no webhook endpoint with the id (another account's is as unknown as
    none)."""

    def __init__(self, webhook_id: str) -> None:
        message = f"no webhook with id {webhook_id[:64]!r}"  # the id echoed, shortened
        super().__init__(message, details={"parameter": "webhook_id"})


class WebhookUrlRefused(InvalidParameter):
    """The URL is not one webhooks may be sent to (docs/guide/webhooks.md)."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(parameter, f"{parameter} {reason}")


class WebhookLimitReached(InvalidParameter):
    """The account has as many endpoints as `ATRIUM_WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT` allows."""

    def __init__(self, limit: int) -> None:
        super().__init__("url", f"an account may register at most {limit} webhooks")
