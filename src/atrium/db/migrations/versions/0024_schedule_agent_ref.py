"""schedules: the agent version or alias a schedule's runs use

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-29

`schedules.agent_ref` (docs/decisions/0064-versions-and-files-gaps.md): what came after `@` in
the schedule's `agent_id` (`3` or `prod`); null for the agent's live version, which every
existing schedule runs.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("schedules") as batch:
        batch.add_column(sa.Column("agent_ref", sa.String(length=40), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("schedules") as batch:
        batch.drop_column("agent_ref")
