"""agent versions: each config an agent has had, aliases pointing at them, a run's version

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28

Every agent gets version 1, its config as it is now; `agents.version` says which version the
config is. Runs created earlier keep `agent_version` null: nobody recorded which config they
had beyond their own snapshot (docs/decisions/0056-agent-versions.md).
"""

import secrets
from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from atrium.kit.canonical_json import content_hash

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)


def _version_id() -> str:
    # What `kit.ids.new_id("ver")` makes.
    token = secrets.token_urlsafe(16).replace("-", "a").replace("_", "b")
    return f"ver_{token}"


def _create_tables() -> None:
    op.create_table(
        "agent_versions",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("agent_id", sa.String(40), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("restored_from", sa.Integer(), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name="fk_agent_versions_agent_id_agents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_agent_versions"),
        sa.UniqueConstraint("agent_id", "number", name="uq_agent_versions_agent_id"),
    )
    op.create_table(
        "agent_aliases",
        sa.Column("agent_id", sa.String(40), nullable=False),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("split_version", sa.Integer(), nullable=True),
        sa.Column("split_weight", sa.Float(), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["agent_id"],
            ["agents.id"],
            name="fk_agent_aliases_agent_id_agents",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("agent_id", "name", name="pk_agent_aliases"),
    )


def _backfill() -> None:
    agents = sa.table("agents", sa.column("id", sa.String()), sa.column("config", sa.JSON()))
    versions = sa.table(
        "agent_versions",
        sa.column("id", sa.String()),
        sa.column("agent_id", sa.String()),
        sa.column("number", sa.Integer()),
        sa.column("config", sa.JSON()),
        sa.column("content_hash", sa.String()),
        sa.column("created_at", _TZ),
    )
    connection = op.get_bind()
    now = datetime.now(UTC)
    rows = [
        {
            "id": _version_id(),
            "agent_id": agent_id,
            "number": 1,
            "config": config,
            "content_hash": content_hash(config),
            "created_at": now,
        }
        for agent_id, config in connection.execute(sa.select(agents.c.id, agents.c.config))
    ]
    if rows:
        connection.execute(sa.insert(versions), rows)


def upgrade() -> None:
    _create_tables()
    with op.batch_alter_table("agents") as batch:
        batch.add_column(sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("agent_version", sa.Integer(), nullable=True))
    _backfill()


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("agent_version")
    with op.batch_alter_table("agents") as batch:
        batch.drop_column("version")
    op.drop_table("agent_aliases")
    op.drop_table("agent_versions")
