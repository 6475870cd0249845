"""an index for the retention purge of finished webhook deliveries

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_webhook_deliveries_status_created_at",
        "webhook_deliveries",
        ["status", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_status_created_at", table_name="webhook_deliveries")
