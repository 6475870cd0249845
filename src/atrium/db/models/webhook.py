"""Webhook endpoints of an account and the outbox of their deliveries."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base
from atrium.kit.time import utcnow


class WebhookEndpoint(Base):
    """A URL that hears about the account's finished runs, signed with its own secret."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2048))
    # Event kinds this endpoint receives (a subset of run.completed, run.failed, run.cancelled).
    events: Mapped[list[str]] = mapped_column(JSON)
    # Sealed with the deployment's key (`webhooks.signing.sealed`): signing needs the secret
    # itself (Standard Webhooks uses a shared HMAC key), so it cannot be hashed.
    secret: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(Base):
    """One message of the outbox: recorded with the run's terminal state, sent by a worker.

    `id` is the stable `webhook-id` receivers de-duplicate on; `payload` is rendered on the
    first attempt and reused, so every retry sends the same bytes.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        # The sender's scan: pending deliveries whose next attempt is due.
        Index("ix_webhook_deliveries_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_endpoint_id_created_at", "endpoint_id", "created_at"),
        Index("ix_webhook_deliveries_account_id_created_at", "account_id", "created_at"),
        # The retention purge: delivered and failed deliveries older than the cutoff.
        Index("ix_webhook_deliveries_status_created_at", "status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # None: the run's own `webhook_url`. Deleting an endpoint deletes its deliveries.
    endpoint_id: Mapped[str | None] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), default=None
    )
    # None: a schedule's event that no run goes with (`schedule.skipped`).
    run_id: Mapped[str | None] = mapped_column(
        ForeignKey("runs.id", ondelete="CASCADE"), index=True, default=None
    )
    event: Mapped[str] = mapped_column(String(32))
    url: Mapped[str] = mapped_column(String(2048))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    locked_until: Mapped[datetime | None] = mapped_column(default=None)
    last_response_status: Mapped[int | None] = mapped_column(Integer, default=None)
    last_response_body: Mapped[str | None] = mapped_column(Text, default=None)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    payload: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
