"""memory blocks: named texts pinned into agents' instructions, their versions, and the
versions each run saw

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28

`memory_blocks` holds each block's current text, `memory_block_versions` every version with
its writer (docs/decisions/0060-memory-blocks.md), `runs.memory_blocks` the versions a run's
instructions were rendered from.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "memory_blocks",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("char_limit", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_memory_blocks_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory_blocks"),
        sa.UniqueConstraint("account_id", "label", name="uq_memory_blocks_label"),
    )
    op.create_index(
        "ix_memory_blocks_account_id_created_at", "memory_blocks", ["account_id", "created_at"]
    )
    op.create_table(
        "memory_block_versions",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("block_id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("char_limit", sa.Integer(), nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.String(40), nullable=True),
        sa.Column("tool_call_id", sa.String(200), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_memory_block_versions_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory_block_versions"),
        sa.UniqueConstraint("block_id", "version", name="uq_memory_block_versions_version"),
    )
    op.create_index(
        "ix_memory_block_versions_account_id_label",
        "memory_block_versions",
        ["account_id", "label", "created_at"],
    )
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("memory_blocks", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("memory_blocks")
    op.drop_index("ix_memory_block_versions_account_id_label", table_name="memory_block_versions")
    op.drop_table("memory_block_versions")
    op.drop_index("ix_memory_blocks_account_id_created_at", table_name="memory_blocks")
    op.drop_table("memory_blocks")
