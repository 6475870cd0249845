"""files: uploaded bytes kept uncompressed on PostgreSQL, so a range is read alone

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-29

`files.content` gets `STORAGE EXTERNAL` on PostgreSQL (docs/decisions/0057-files-as-input.md):
a compressed bytea is decompressed from its start for every `substring` of it, which makes
reading a file a range at a time quadratic in its size; uncompressed, each range reads its own
TOAST chunks. The file then takes its own size in the database, as on disk or in S3. Values
stored before keep their compression until rewritten. SQLite has no such setting.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _storage(kind: str) -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER TABLE files ALTER COLUMN content SET STORAGE {kind}")


def upgrade() -> None:
    _storage("EXTERNAL")


def downgrade() -> None:
    _storage("EXTENDED")
