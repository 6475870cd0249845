"""Rules of webhooks: valid URLs and events, the per-account cap, ownership, hard deletion."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import WebhookDelivery, WebhookEndpoint
from atrium.errors import InvalidParameter
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import looks_like_id, new_id
from atrium.kit.time import utcnow
from atrium.outbound.public_targets import TargetRefused, check_url
from atrium.secrets_at_rest import SecretBox
from atrium.settings import Settings
from atrium.webhooks import repository, signing
from atrium.webhooks.errors import WebhookLimitReached, WebhookNotFound, WebhookUrlRefused
from atrium.webhooks.schemas import DEFAULT_EVENTS, EVENTS, WebhookCreate

MAX_DELIVERIES_LIMIT = 200


def checked_url(settings: Settings, url: str, *, parameter: str) -> str:
    """A URL a webhook may target (also `webhook_url` of a run); a 400 naming `parameter`."""
    try:
        return check_url(url, allow_private=settings.allow_private_targets)
    except TargetRefused as exc:
        raise WebhookUrlRefused(parameter, str(exc)) from None


def _checked_events(events: list[str] | None) -> list[str]:
    if events is None:
        return list(DEFAULT_EVENTS)
    if not events:
        raise InvalidParameter("events", "events must name at least one event")
    unknown = [event for event in events if event not in EVENTS]
    if unknown:
        raise InvalidParameter(
            "events", f"unknown event {unknown[0][:64]!r}; events are {', '.join(EVENTS)}"
        )
    if len(set(events)) != len(events):
        raise InvalidParameter("events", "events must not repeat")
    return list(events)


@dataclass(frozen=True, slots=True)
class CreatedWebhook:
    """A new endpoint and its signing secret, which the endpoint holds only sealed."""

    endpoint: WebhookEndpoint
    secret: str


async def create_webhook(
    session: AsyncSession, *, settings: Settings, account_id: int, data: WebhookCreate
) -> CreatedWebhook:
    url = checked_url(settings, data.url, parameter="url")
    events = _checked_events(data.events)
    cap = settings.webhook_max_endpoints_per_account
    if await repository.count_endpoints(session, account_id=account_id) >= cap:
        raise WebhookLimitReached(cap)
    secret = signing.new_secret()
    endpoint = WebhookEndpoint(
        id=new_id("wh"),
        account_id=account_id,
        url=url,
        events=events,
        secret=signing.sealed(secret, SecretBox.of(settings)),
        created_at=utcnow(),
    )
    session.add(endpoint)
    await session.flush()
    return CreatedWebhook(endpoint, secret)


async def list_webhooks(session: AsyncSession, *, account_id: int) -> Sequence[WebhookEndpoint]:
    """The account's endpoints, oldest first."""
    return await repository.list_endpoints(session, account_id=account_id)


async def get_webhook(
    session: AsyncSession, *, account_id: int, webhook_id: str
) -> WebhookEndpoint:
    endpoint = await repository.get_endpoint(session, account_id=account_id, webhook_id=webhook_id)
    if endpoint is None:
        raise WebhookNotFound(webhook_id)
    return endpoint


async def delete_webhook(session: AsyncSession, *, account_id: int, webhook_id: str) -> str:
    """Hard delete: the endpoint and its deliveries (pending ones are never sent)."""
    endpoint = await get_webhook(session, account_id=account_id, webhook_id=webhook_id)
    endpoint_id = endpoint.id
    session.expunge(endpoint)
    await repository.delete_endpoint(session, webhook_id=endpoint_id)
    return endpoint_id


async def list_deliveries(
    session: AsyncSession,
    *,
    account_id: int,
    webhook_id: str | None = None,
    run_id: str | None = None,
    limit: int,
    cursor: str | None = None,
) -> tuple[Sequence[WebhookDelivery], str | None]:
    """A page of the account's deliveries, newest first (of one endpoint, or of one run), and
    the cursor of the next page."""
    before = decode_cursor(cursor) if cursor else None
    if webhook_id is not None:
        await get_webhook(session, account_id=account_id, webhook_id=webhook_id)
    if run_id is not None and not looks_like_id(run_id):
        return [], None
    rows = await repository.list_deliveries(
        session,
        account_id=account_id,
        endpoint_id=webhook_id,
        run_id=run_id,
        before=before,
        limit=limit + 1,
    )
    return split_page(rows, limit)
