"""memory embeddings (search by meaning)

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28

Each item's vector (float32 bytes) and the model that made it. Plain ADD COLUMN, not a batch
copy: on SQLite a copied table would lose the FTS5 triggers of migration 0015.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("memory_items", sa.Column("embedding", sa.LargeBinary(), nullable=True))
    op.add_column("memory_items", sa.Column("embedding_model", sa.String(200), nullable=True))


def downgrade() -> None:
    op.drop_column("memory_items", "embedding_model")
    op.drop_column("memory_items", "embedding")
