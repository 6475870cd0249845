"""threads as resources: metadata, forks, summaries, why a run was cancelled

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

A thread gets metadata, where it was forked from with a copy of the history it starts from, and
the summaries compaction writes; a run records why its cancel was asked (a client, or a later
prompt of its thread that interrupts or rolls it back). Threads are listed newest first per
account: the account's index becomes (account_id, created_at).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("threads") as batch:
        batch.add_column(sa.Column("metadata", sa.JSON(), server_default="{}", nullable=False))
        batch.add_column(sa.Column("forked_from_thread_id", sa.String(40), nullable=True))
        batch.add_column(sa.Column("forked_from_run_id", sa.String(40), nullable=True))
        batch.add_column(sa.Column("base_messages", sa.JSON(), nullable=True))
        batch.drop_index("ix_threads_account_id")
        batch.create_index("ix_threads_account_id_created_at", ["account_id", "created_at"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("cancel_reason", sa.String(16), nullable=True))
    op.create_table(
        "thread_summaries",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("thread_id", sa.String(40), nullable=False),
        sa.Column("through_run_id", sa.String(40), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("credits_micro", sa.BigInteger(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["threads.id"],
            name="fk_thread_summaries_thread_id_threads",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_thread_summaries"),
    )
    op.create_index(
        "ix_thread_summaries_thread_id_created_at",
        "thread_summaries",
        ["thread_id", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_thread_summaries_thread_id_created_at", table_name="thread_summaries")
    op.drop_table("thread_summaries")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("cancel_reason")
    with op.batch_alter_table("threads") as batch:
        batch.drop_index("ix_threads_account_id_created_at")
        batch.create_index("ix_threads_account_id", ["account_id"])
        batch.drop_column("base_messages")
        batch.drop_column("forked_from_run_id")
        batch.drop_column("forked_from_thread_id")
        batch.drop_column("metadata")
