"""retention: threads by age

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28

Retention (`ATRIUM_RETENTION_DAYS`) walks threads oldest first, a batch at a time, and stops at
the first young one: an index on `threads.created_at` makes each batch a short range scan.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_threads_created_at", "threads", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_threads_created_at", table_name="threads")
