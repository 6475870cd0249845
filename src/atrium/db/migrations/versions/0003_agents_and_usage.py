"""agents and usage rollup

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("is_default", sa.Boolean(), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_agents_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_agents"),
    )
    op.create_index("ix_agents_account_id", "agents", ["account_id"])
    default_predicate = sa.text("is_default AND deleted_at IS NULL")
    op.create_index(
        "uq_agents_default_per_account",
        "agents",
        ["account_id"],
        unique=True,
        sqlite_where=default_predicate,
        postgresql_where=default_predicate,
    )
    op.create_table(
        "agent_usage_daily",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("agent_id", sa.String(40), nullable=False),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("completed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("cancelled", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("credits_micro", sa.BigInteger(), nullable=False),
        sa.Column("requests", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_agent_usage_daily_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name="fk_agent_usage_daily_agent_id_agents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("account_id", "day", "agent_id", name="pk_agent_usage_daily"),
        sqlite_with_rowid=False,
    )
    op.create_index("ix_agent_usage_daily_agent_id_day", "agent_usage_daily", ["agent_id", "day"])


def downgrade() -> None:
    op.drop_table("agent_usage_daily")
    op.drop_index("uq_agents_default_per_account", table_name="agents")
    op.drop_table("agents")
