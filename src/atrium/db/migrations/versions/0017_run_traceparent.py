"""traces: a run's incoming trace context and how far its spans were exported

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28

`traceparent` is the W3C header of the request that created the run: the run's span continues
that trace. `trace_exported_seq` is the last event whose spans went to the OTLP collector, so a
wait's spans are sent once and a sweep finds finished runs whose export was cut off
(docs/decisions/0055-traces-from-stored-events.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("traceparent", sa.String(55), nullable=True))
        batch.add_column(
            sa.Column("trace_exported_seq", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("trace_exported_seq")
        batch.drop_column("traceparent")
