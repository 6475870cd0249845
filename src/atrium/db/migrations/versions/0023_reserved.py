"""memory changes: the latest write or delete of each item, numbered in commit order, for the
in-memory vectors of search by meaning

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28

`memory_changes` (docs/decisions/0065-memory-vector-cache.md): one row per item, replaced by
each write and delete, its `seq` never reused (AUTOINCREMENT on SQLite). No rows for the
existing items: a process reads those from `memory_items` when it first searches an account.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "memory_changes",
        sa.Column("seq", _SEQ, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("item_seq", _SEQ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_memory_changes_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("seq", name="pk_memory_changes"),
        sa.UniqueConstraint("item_seq", name="uq_memory_changes_item_seq"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_memory_changes_account_id_seq", "memory_changes", ["account_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_memory_changes_account_id_seq", table_name="memory_changes")
    op.drop_table("memory_changes")
