"""files: uploads an account gives its runs, and a run's input parts

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28

`files` holds each upload's metadata, and its bytes when the store is the database;
`runs.input` the run's input parts as references (file ids, URLs), never the bytes
(docs/decisions/0057-files-as-input.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "files",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("content_type", sa.String(127), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("storage", sa.String(16), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_files_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_files"),
    )
    op.create_index("ix_files_account_id_created_at", "files", ["account_id", "created_at"])
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("input", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("input")
    op.drop_index("ix_files_account_id_created_at", table_name="files")
    op.drop_table("files")
