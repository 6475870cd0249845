"""eval runs and their case results

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-28

Reserved: its schema lands with the work it belongs to; until then it changes nothing, so
the chain of revisions stays whole while that work is under way.
"""

from collections.abc import Sequence

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
