"""runs that wait for the caller: `requires_action` state, the answers given, usage counter

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None
_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("runs", sa.Column("required_action", sa.JSON(), nullable=True))
    op.add_column("runs", sa.Column("action_expires_at", _TZ, nullable=True))
    op.add_column("runs", sa.Column("waits", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_runs_action_expires_at", "runs", ["action_expires_at"])
    op.create_table(
        "run_actions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "run_id", sa.String(40), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("wait", sa.Integer(), nullable=False),
        sa.Column("tool_calls", sa.JSON(), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=True),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.UniqueConstraint("run_id", "wait", name="uq_run_actions_run_id_wait"),
        sa.UniqueConstraint("run_id", "idempotency_key", name="uq_run_actions_run_id_key"),
    )
    op.add_column(
        "agent_usage_daily",
        sa.Column("requires_action", sa.BigInteger(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    with op.batch_alter_table("agent_usage_daily") as batch:
        batch.drop_column("requires_action")
    op.drop_table("run_actions")
    op.drop_index("ix_runs_action_expires_at", table_name="runs")
    # Batch mode: SQLite drops a column by rebuilding the table.
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("waits")
        batch.drop_column("action_expires_at")
        batch.drop_column("required_action")
