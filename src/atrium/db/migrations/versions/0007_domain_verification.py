"""domain verification: a per-domain token and when the domain was verified

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24

A domain is served only once its owner proved control of it
(docs/design.md#domain-verification). Every row gets its own random token, existing rows
included, and starts unverified: a name stored without that proof may be one that its account
never controlled. Rows inserted without a token (bulk loads) get one from the database: a
volatile column default on PostgreSQL (13+: built-in `gen_random_uuid`), a trigger on SQLite
(whose `ADD COLUMN` takes constant defaults only).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SQLITE_TOKEN = "lower(hex(randomblob(16)))"
_POSTGRES_TOKEN = "replace(gen_random_uuid()::text, '-', '')"


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    default = "''" if sqlite else _POSTGRES_TOKEN
    op.add_column(
        "domains",
        sa.Column(
            "verification_token",
            sa.String(32),
            nullable=False,
            server_default=sa.text(default),
        ),
    )
    op.add_column("domains", sa.Column("verified_at", sa.DateTime(timezone=True), nullable=True))
    if sqlite:
        op.execute(f"UPDATE domains SET verification_token = {_SQLITE_TOKEN}")
        op.execute(
            f"""CREATE TRIGGER domains_verification_token AFTER INSERT ON domains
            WHEN new.verification_token = '' BEGIN
                UPDATE domains SET verification_token = {_SQLITE_TOKEN} WHERE id = new.id;
            END"""
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS domains_verification_token")
    op.drop_column("domains", "verified_at")
    op.drop_column("domains", "verification_token")
