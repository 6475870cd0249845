"""`/v1/webhooks`: endpoints that hear about finished runs, and their deliveries."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, status

from atrium.http.deps import CurrentPrincipal, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.webhooks import service
from atrium.webhooks.errors import WebhookLimitReached, WebhookNotFound, WebhookUrlRefused
from atrium.webhooks.schemas import (
    DeliveryList,
    WebhookCreate,
    WebhookCreated,
    WebhookDeleted,
    WebhookList,
    WebhookOut,
)

# A body sent without Content-Type is read as JSON (what this group takes); the gateway already
# answers 415 for any other declared type.
router = APIRouter(prefix="/webhooks", tags=["webhooks"], strict_content_type=False)
_NOT_FOUND = error_responses(WebhookNotFound)
Limit = Annotated[int, Query(ge=1, le=service.MAX_DELIVERIES_LIMIT, description="At most 200.")]


@router.get("")
async def list_webhooks(session: SessionDep, principal: CurrentPrincipal) -> WebhookList:
    """The account's webhook endpoints, oldest first (secrets are never shown again)."""
    endpoints = await service.list_webhooks(session, account_id=principal.account_id)
    return WebhookList(data=[WebhookOut.of(endpoint) for endpoint in endpoints])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(WebhookUrlRefused, WebhookLimitReached),
)
async def create_webhook(
    body: WebhookCreate, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> WebhookCreated:
    """Register an endpoint for `events` (default: run.completed, run.failed, run.cancelled).
    The response carries the signing `secret`, shown this once."""
    created = await service.create_webhook(
        session, settings=settings, account_id=principal.account_id, data=body
    )
    return WebhookCreated.created(created.endpoint, created.secret)


# Declared before `/{webhook_id}`, which would otherwise take "deliveries" for an id.
@router.get("/deliveries")
async def list_all_deliveries(
    session: SessionDep,
    principal: CurrentPrincipal,
    run_id: Annotated[str | None, Query(max_length=40)] = None,
    limit: Limit = 50,
    cursor: CursorQuery = None,
) -> DeliveryList:
    """The account's deliveries, newest first (also those of a run's own `webhook_url`);
    `run_id` narrows them to one run. Follow `next_cursor` (as `cursor`) while `has_more`."""
    deliveries, next_cursor = await service.list_deliveries(
        session, account_id=principal.account_id, run_id=run_id, limit=limit, cursor=cursor
    )
    return DeliveryList.page(deliveries, next_cursor)


@router.get("/{webhook_id}", responses=_NOT_FOUND)
async def get_webhook(
    webhook_id: str, session: SessionDep, principal: CurrentPrincipal
) -> WebhookOut:
    """One endpoint of the account (404 when unknown or another account's)."""
    endpoint = await service.get_webhook(
        session, account_id=principal.account_id, webhook_id=webhook_id
    )
    return WebhookOut.of(endpoint)


@router.delete("/{webhook_id}", responses=_NOT_FOUND)
async def delete_webhook(
    webhook_id: str, session: SessionDep, principal: CurrentPrincipal
) -> WebhookDeleted:
    """Delete an endpoint and its deliveries; pending ones are never sent."""
    deleted = await service.delete_webhook(
        session, account_id=principal.account_id, webhook_id=webhook_id
    )
    return WebhookDeleted(webhook_id=deleted)


@router.get("/{webhook_id}/deliveries", responses=_NOT_FOUND)
async def list_deliveries(
    webhook_id: str,
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: Limit = 50,
    cursor: CursorQuery = None,
) -> DeliveryList:
    """Deliveries to this endpoint, newest first: status, attempts, last response, next
    attempt. Follow `next_cursor` (as `cursor`) while `has_more`."""
    deliveries, next_cursor = await service.list_deliveries(
        session,
        account_id=principal.account_id,
        webhook_id=webhook_id,
        limit=limit,
        cursor=cursor,
    )
    return DeliveryList.page(deliveries, next_cursor)
