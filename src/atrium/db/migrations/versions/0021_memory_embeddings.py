"""memory embeddings (search by meaning)

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28

Reserved: its schema lands with the work it belongs to; until then it changes nothing, so
the chain of revisions stays whole while that work is under way.
"""

from collections.abc import Sequence

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
