"""Request and response bodies of `/v1/webhooks`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from atrium.db.models import WebhookDelivery, WebhookEndpoint
from atrium.kit.json_object import JsonObject
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import ALWAYS_SENT, PUBLIC_URL

EVENTS: Final = (
    "run.completed",
    "run.failed",
    "run.cancelled",
    "run.requires_action",
    "schedule.fired",
    "schedule.skipped",
)
# An endpoint created without `events` takes the finished runs; waits are opted into.
DEFAULT_EVENTS: Final = ("run.completed", "run.failed", "run.cancelled")
EventName = Literal[
    "run.completed",
    "run.failed",
    "run.cancelled",
    "run.requires_action",
    "schedule.fired",
    "schedule.skipped",
]
DeliveryStatus = Literal["pending", "delivered", "failed"]


def _event_list(schema: JsonObject) -> None:
    """The document's `events`: one or more known events, each once (`_checked_events`)."""
    for variant in schema.get("anyOf", []):
        if variant.get("type") == "array":
            variant.update(items={"enum": list(EVENTS)}, minItems=1, uniqueItems=True)


class WebhookCreate(BaseModel):
    """A new endpoint: `url` (http or https), `events` (default: the three finishing events)."""

    # Unknown keys are errors (a typo must not be silently ignored); values are not coerced.
    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(
        description="Where to POST: an http or https URL of a public host, at most 2048 "
        "characters (loopback and private addresses need ATRIUM_ALLOW_PRIVATE_TARGETS).",
        json_schema_extra=PUBLIC_URL,
    )
    events: list[str] | None = Field(
        None,
        description="Any of run.completed, run.failed, run.cancelled, run.requires_action, "
        "schedule.fired, schedule.skipped; default: the first three (finished runs).",
        json_schema_extra=_event_list,
    )


class WebhookOut(BaseModel):
    """A webhook endpoint (its secret is shown only when it is created)."""

    webhook_id: str
    url: str
    events: list[EventName]
    created_at: str

    @classmethod
    def of(cls, endpoint: WebhookEndpoint) -> WebhookOut:
        return cls(
            webhook_id=endpoint.id,
            url=endpoint.url,
            events=list(endpoint.events),
            created_at=isoformat(endpoint.created_at),
        )


class WebhookCreated(WebhookOut):
    """The new endpoint and its signing secret, shown this once."""

    secret: str = Field(description="`whsec_…`: verify signatures with it. Shown only here.")

    @classmethod
    def created(cls, endpoint: WebhookEndpoint, secret: str) -> WebhookCreated:
        return cls(**WebhookOut.of(endpoint).model_dump(), secret=secret)


class WebhookList(BaseModel):
    data: list[WebhookOut]


class WebhookDeleted(BaseModel):
    model_config = ALWAYS_SENT

    webhook_id: str
    deleted: bool = True


class DeliveryOut(BaseModel):
    """One message to one endpoint and how its attempts went. `delivery_id` is the
    `webhook-id` header every attempt carries."""

    delivery_id: str
    webhook_id: str | None = Field(
        description="The endpoint; null for the run's own `webhook_url`."
    )
    run_id: str | None = Field(description="The run; null for a `schedule.skipped`.")
    event: EventName
    url: str
    status: DeliveryStatus
    attempts: int
    response_status: int | None
    response_body: str | None
    error: str | None
    next_attempt_at: str | None
    created_at: str
    delivered_at: str | None

    @classmethod
    def of(cls, delivery: WebhookDelivery) -> DeliveryOut:
        return cls(
            delivery_id=delivery.id,
            webhook_id=delivery.endpoint_id,
            run_id=delivery.run_id,
            event=delivery.event,
            url=delivery.url,
            status=delivery.status,
            attempts=delivery.attempts,
            response_status=delivery.last_response_status,
            response_body=delivery.last_response_body,
            error=delivery.last_error,
            next_attempt_at=(
                isoformat(delivery.next_attempt_at)
                if delivery.next_attempt_at and delivery.status == "pending"
                else None
            ),
            created_at=isoformat(delivery.created_at),
            delivered_at=isoformat(delivery.delivered_at) if delivery.delivered_at else None,
        )


class DeliveryList(BaseModel):
    """A page of deliveries, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[DeliveryOut]
    has_more: bool
    next_cursor: str | None

    @classmethod
    def page(cls, deliveries: Sequence[WebhookDelivery], next_cursor: str | None) -> DeliveryList:
        return cls(
            data=[DeliveryOut.of(delivery) for delivery in deliveries],
            has_more=next_cursor is not None,
            next_cursor=next_cursor,
        )
