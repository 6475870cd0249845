"""webhook endpoints, the delivery outbox, a run's own webhook

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def _account_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["account_id"], ["accounts.id"], name=f"fk_{table}_account_id_accounts", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(64), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        _account_fk("webhook_endpoints"),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_endpoints"),
    )
    op.create_index("ix_webhook_endpoints_account_id", "webhook_endpoints", ["account_id"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.String(40), nullable=True),
        sa.Column("run_id", sa.String(40), nullable=False),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _TZ, nullable=True),
        sa.Column("locked_until", _TZ, nullable=True),
        sa.Column("last_response_status", sa.Integer(), nullable=True),
        sa.Column("last_response_body", sa.Text(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("payload", sa.Text(), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("delivered_at", _TZ, nullable=True),
        _account_fk("webhook_deliveries"),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name="fk_webhook_deliveries_endpoint_id_webhook_endpoints",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name="fk_webhook_deliveries_run_id_runs", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_webhook_deliveries"),
    )
    op.create_index(
        "ix_webhook_deliveries_status_next_attempt_at",
        "webhook_deliveries",
        ["status", "next_attempt_at"],
    )
    op.create_index(
        "ix_webhook_deliveries_endpoint_id_created_at",
        "webhook_deliveries",
        ["endpoint_id", "created_at"],
    )
    op.create_index(
        "ix_webhook_deliveries_account_id_created_at",
        "webhook_deliveries",
        ["account_id", "created_at"],
    )
    op.create_index("ix_webhook_deliveries_run_id", "webhook_deliveries", ["run_id"])

    # Plain ADD COLUMN (nullable): SQLite needs no table rebuild for it.
    op.add_column("runs", sa.Column("webhook_url", sa.String(2048), nullable=True))
    op.add_column("runs", sa.Column("webhook_secret", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("webhook_secret")
        batch.drop_column("webhook_url")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhook_endpoints")
