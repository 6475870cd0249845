"""domain verification: the last check's time and, when it failed, why

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28

A domain's owner reads why `verify` did not verify it (`verification.last_error`) and when DNS
was last asked. Domains already verified count as checked when they were verified.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("domains", sa.Column("verification_error", sa.String(32), nullable=True))
    op.add_column(
        "domains",
        sa.Column("verification_checked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.execute(
        "UPDATE domains SET verification_checked_at = verified_at WHERE verified_at IS NOT NULL"
    )


def downgrade() -> None:
    # Not batch mode: rebuilding the table on SQLite would drop its triggers (migrations 0002,
    # 0007); SQLite drops a column in place since 3.35.
    op.drop_column("domains", "verification_checked_at")
    op.drop_column("domains", "verification_error")
