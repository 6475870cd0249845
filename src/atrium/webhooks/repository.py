"""SQL of webhooks: endpoints, the outbox of deliveries, the sender's claim and its results.

The outbox and sender statements use the tables (Core), not the mapped classes: they run in
the worker's hot transactions, where ORM objects cost CPU for nothing (see
runs/lifecycle/run_queue.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, TypedDict, cast

from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.models import Run, WebhookDelivery, WebhookEndpoint
from atrium.kit.cursor import Position, older_than
from atrium.kit.ids import looks_like_id

_ENDPOINTS = cast(Table, WebhookEndpoint.__table__)
_DELIVERIES = cast(Table, WebhookDelivery.__table__)
_RUNS = cast(Table, Run.__table__)
DELIVERY_PAYLOAD = _DELIVERIES.c.payload


# --- endpoints ----------------------------------------------------------------------------------
async def count_endpoints(session: AsyncSession, *, account_id: int) -> int:
    found = await session.scalar(
        select(func.count()).select_from(_ENDPOINTS).where(_ENDPOINTS.c.account_id == account_id)
    )
    return int(found or 0)


async def list_endpoints(session: AsyncSession, *, account_id: int) -> Sequence[WebhookEndpoint]:
    return (
        await session.scalars(
            select(WebhookEndpoint)
            .where(WebhookEndpoint.account_id == account_id)
            .order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
        )
    ).all()


async def get_endpoint(
    session: AsyncSession, *, account_id: int, webhook_id: str
) -> WebhookEndpoint | None:
    if not looks_like_id(webhook_id):
        return None
    return await session.scalar(
        select(WebhookEndpoint).where(
            WebhookEndpoint.id == webhook_id, WebhookEndpoint.account_id == account_id
        )
    )


async def delete_endpoint(session: AsyncSession, *, webhook_id: str) -> None:
    # Explicit rather than trusting ON DELETE CASCADE alone: deliveries still pending must stop
    # even on a connection whose foreign keys are off.
    await session.execute(delete(_DELIVERIES).where(_DELIVERIES.c.endpoint_id == webhook_id))
    await session.execute(delete(_ENDPOINTS).where(_ENDPOINTS.c.id == webhook_id))


# Read by every run's terminal transaction: built once, executed with the account's id.
_SUBSCRIBED = select(_ENDPOINTS.c.id, _ENDPOINTS.c.url, _ENDPOINTS.c.events).where(
    _ENDPOINTS.c.account_id == bindparam("b_account_id")
)


def subscribed_endpoints(
    session: Session, *, account_id: int
) -> Sequence[tuple[str, str, list[str]]]:
    """(id, url, events) of the account's endpoints: one indexed read, no ORM objects."""
    rows = session.connection().execute(_SUBSCRIBED, {"b_account_id": account_id})
    return [(row.id, row.url, list(row.events)) for row in rows]


# --- deliveries ---------------------------------------------------------------------------------
class NewDelivery(TypedDict):
    """One `webhook_deliveries` row as the outbox records it (pending, never tried)."""

    id: str
    account_id: int
    # None for a run's own `webhook_url`.
    endpoint_id: str | None
    # None for an event about the account rather than a run.
    run_id: str | None
    event: str
    url: str
    status: str
    attempts: int
    next_attempt_at: datetime
    locked_until: datetime | None
    last_response_status: int | None
    last_response_body: str | None
    last_error: str | None
    # The body, rendered when the event happened; None: rendered at the first send.
    payload: str | None
    created_at: datetime
    delivered_at: datetime | None


class AttemptOutcome(TypedDict, total=False):
    """What one send of a delivery writes on its row."""

    # The body sent (a SQL expression: the stored one, when the row already had one).
    payload: ColumnElement[str | None]
    last_response_status: int | None
    last_response_body: str | None
    last_error: str | None
    status: str
    delivered_at: datetime
    next_attempt_at: datetime | None


def insert_deliveries(session: Session, rows: Sequence[NewDelivery]) -> None:
    if rows:
        session.execute(insert(_DELIVERIES), list(rows))


async def list_deliveries(
    session: AsyncSession,
    *,
    account_id: int,
    endpoint_id: str | None = None,
    run_id: str | None = None,
    before: Position | None = None,
    limit: int,
) -> Sequence[WebhookDelivery]:
    query = select(WebhookDelivery).where(WebhookDelivery.account_id == account_id)
    if before is not None:
        query = query.where(older_than(WebhookDelivery.created_at, WebhookDelivery.id, before))
    if endpoint_id is not None:
        query = query.where(WebhookDelivery.endpoint_id == endpoint_id)
    if run_id is not None:
        query = query.where(WebhookDelivery.run_id == run_id)
    query = query.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc()).limit(
        limit
    )
    return (await session.scalars(query)).all()


@dataclass(frozen=True, slots=True)
class DueDelivery:
    """A delivery the sender holds the lease of (plain values)."""

    delivery_id: str
    account_id: int
    endpoint_id: str | None
    # None: an event about the account (a schedule's), its payload recorded with it.
    run_id: str | None
    url: str
    attempts: int
    payload: str | None
    secret: str | None


def _due(now: datetime) -> Any:
    return and_(
        _DELIVERIES.c.status == "pending",
        _DELIVERIES.c.next_attempt_at <= now,
        or_(_DELIVERIES.c.locked_until.is_(None), _DELIVERIES.c.locked_until <= now),
    )


async def next_attempt_at(session: AsyncSession, *, now: datetime) -> datetime | None:
    """When the next unleased pending delivery is due (maybe already): a read, so an idle
    sender never takes the write lock, and knows how long it may sleep."""
    found: datetime | None = await session.scalar(
        select(func.min(_DELIVERIES.c.next_attempt_at)).where(
            _DELIVERIES.c.status == "pending",
            or_(_DELIVERIES.c.locked_until.is_(None), _DELIVERIES.c.locked_until <= now),
        )
    )
    return found


async def claim_due(
    session: AsyncSession, *, now: datetime, lease_until: datetime, limit: int, lock_rows: bool
) -> list[DueDelivery]:
    """Lease up to `limit` due deliveries (pending, next attempt reached, lease free or expired).

    PostgreSQL skips rows another sender is claiming; SQLite's writers are serialized already.
    """
    query = (
        select(_DELIVERIES.c.id)
        .where(_due(now))
        .order_by(_DELIVERIES.c.next_attempt_at)
        .limit(limit)
    )
    if lock_rows:
        query = query.with_for_update(skip_locked=True)
    ids = list((await session.scalars(query)).all())
    if not ids:
        return []
    await session.execute(
        update(_DELIVERIES).where(_DELIVERIES.c.id.in_(ids)).values(locked_until=lease_until)
    )
    # The signing secret: the endpoint's, or the run's own for its webhook_url.
    rows = await session.execute(
        select(
            _DELIVERIES.c.id,
            _DELIVERIES.c.account_id,
            _DELIVERIES.c.endpoint_id,
            _DELIVERIES.c.run_id,
            _DELIVERIES.c.url,
            _DELIVERIES.c.attempts,
            _DELIVERIES.c.payload,
            func.coalesce(_ENDPOINTS.c.secret, _RUNS.c.webhook_secret).label("secret"),
        )
        .select_from(
            _DELIVERIES.outerjoin(
                _ENDPOINTS, _ENDPOINTS.c.id == _DELIVERIES.c.endpoint_id
            ).outerjoin(_RUNS, _RUNS.c.id == _DELIVERIES.c.run_id)
        )
        .where(_DELIVERIES.c.id.in_(ids))
    )
    return [DueDelivery(*row) for row in rows.all()]


# --- retention ----------------------------------------------------------------------------------
FINISHED: Final = ("delivered", "failed")


async def purge_finished(session: AsyncSession, *, created_before: datetime, limit: int) -> int:
    """Delete up to `limit` delivered or failed deliveries created before `created_before`;
    how many were deleted. Pending ones stay whatever their age: they are still owed."""
    oldest = (
        select(_DELIVERIES.c.id)
        .where(_DELIVERIES.c.status.in_(FINISHED), _DELIVERIES.c.created_at < created_before)
        .limit(limit)
    )
    result = await session.execute(
        delete(_DELIVERIES).where(_DELIVERIES.c.id.in_(oldest.scalar_subquery()))
    )
    return int(cast(Any, result).rowcount or 0)


async def record_attempt(
    session: AsyncSession, *, delivery_id: str, values: AttemptOutcome
) -> None:
    """The outcome of one attempt; the lease is released with it."""
    await session.execute(
        update(_DELIVERIES)
        .where(_DELIVERIES.c.id == delivery_id, _DELIVERIES.c.status == "pending")
        .values(locked_until=None, attempts=_DELIVERIES.c.attempts + 1, **values)
    )
