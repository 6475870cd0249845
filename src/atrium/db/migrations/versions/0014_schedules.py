"""schedules: cron schedules, their firings, and the runs they queue

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

A firing is keyed by (schedule, fire time) under a unique constraint, and its run is inserted
in the same transaction: however many processes reach a fire time, one run results.
`schedule.skipped` deliveries go with no run, so a delivery's run becomes optional.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("agent_id", sa.String(40), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("cron", sa.String(200), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("thread_id", sa.String(40), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=True),
        sa.Column("starts_at", _TZ, nullable=True),
        sa.Column("ends_at", _TZ, nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("on_overlap", sa.String(16), nullable=False),
        sa.Column("on_missed", sa.String(16), nullable=False),
        sa.Column("max_credits_per_day_micro", sa.BigInteger(), nullable=True),
        sa.Column("next_fire_at", _TZ, nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_schedules_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_schedules"),
    )
    op.create_index("ix_schedules_account_id_created_at", "schedules", ["account_id", "created_at"])
    op.create_index("ix_schedules_next_fire_at", "schedules", ["next_fire_at"])
    op.create_table(
        "schedule_firings",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("schedule_id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("fire_at", _TZ, nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(32), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(40), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["schedule_id"],
            ["schedules.id"],
            name="fk_schedule_firings_schedule_id_schedules",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_schedule_firings_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name="fk_schedule_firings_run_id_runs",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_schedule_firings"),
        sa.UniqueConstraint("schedule_id", "fire_at", name="uq_schedule_firings_schedule_id"),
    )
    op.create_index("ix_schedule_firings_run_id", "schedule_firings", ["run_id"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("schedule_id", sa.String(40), nullable=True))
        batch.create_index("ix_runs_schedule_id_created_at", ["schedule_id", "created_at"])
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.alter_column("run_id", existing_type=sa.String(40), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM webhook_deliveries WHERE run_id IS NULL")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.alter_column("run_id", existing_type=sa.String(40), nullable=False)
    with op.batch_alter_table("runs") as batch:
        batch.drop_index("ix_runs_schedule_id_created_at")
        batch.drop_column("schedule_id")
    op.drop_index("ix_schedule_firings_run_id", table_name="schedule_firings")
    op.drop_table("schedule_firings")
    op.drop_index("ix_schedules_next_fire_at", table_name="schedules")
    op.drop_index("ix_schedules_account_id_created_at", table_name="schedules")
    op.drop_table("schedules")
