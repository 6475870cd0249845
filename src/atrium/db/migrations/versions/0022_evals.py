"""eval runs and their case results

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28

`evals` holds each stored eval: the dataset's name and sha256, the agents as resolved
versions, and every case's result on every agent as one JSON document
(docs/decisions/0062-evals.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "evals",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("dataset_name", sa.String(255), nullable=False),
        sa.Column("dataset_sha256", sa.String(64), nullable=False),
        sa.Column("agents", sa.JSON(), nullable=False),
        sa.Column("cases", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_evals_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_evals"),
    )
    op.create_index("ix_evals_account_id_created_at", "evals", ["account_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_evals_account_id_created_at", table_name="evals")
    op.drop_table("evals")
