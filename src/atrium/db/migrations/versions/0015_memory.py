"""memory: items kept across threads, their text index, and the history of every write

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28

Text search: on SQLite an FTS5 table `memory_items_fts` over `search_text` (external content,
kept by triggers, keyed by the integer `seq`); on PostgreSQL a GIN index over
`to_tsvector('simple', search_text)`. Neither tokenizer stems, so both match the same words.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TZ = sa.DateTime(timezone=True)

_SQLITE = [
    """CREATE VIRTUAL TABLE memory_items_fts USING fts5(
        search_text, content='memory_items', content_rowid='seq')""",
    """CREATE TRIGGER memory_items_after_insert AFTER INSERT ON memory_items BEGIN
        INSERT INTO memory_items_fts(rowid, search_text) VALUES (new.seq, new.search_text);
    END""",
    """CREATE TRIGGER memory_items_after_delete AFTER DELETE ON memory_items BEGIN
        INSERT INTO memory_items_fts(memory_items_fts, rowid, search_text)
            VALUES ('delete', old.seq, old.search_text);
    END""",
    """CREATE TRIGGER memory_items_after_update AFTER UPDATE OF search_text ON memory_items BEGIN
        INSERT INTO memory_items_fts(memory_items_fts, rowid, search_text)
            VALUES ('delete', old.seq, old.search_text);
        INSERT INTO memory_items_fts(rowid, search_text) VALUES (new.seq, new.search_text);
    END""",
]
_POSTGRES = [
    """CREATE INDEX ix_memory_items_search_text_fts ON memory_items
        USING gin (to_tsvector('simple', search_text))""",
]


def upgrade() -> None:
    op.create_table(
        "memory_items",
        sa.Column(
            "seq",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("namespace", sa.JSON(), nullable=False),
        sa.Column("namespace_path", sa.String(600), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("search_text", sa.Text(), nullable=False),
        sa.Column("expires_at", _TZ, nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.Column("updated_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_memory_items_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("seq", name="pk_memory_items"),
        sa.UniqueConstraint("id", name="uq_memory_items_id"),
        sa.UniqueConstraint("account_id", "namespace_path", "key", name="uq_memory_items_key"),
    )
    op.create_index(
        "ix_memory_items_account_id_expires_at", "memory_items", ["account_id", "expires_at"]
    )
    op.create_table(
        "memory_item_history",
        sa.Column("id", sa.String(40), nullable=False),
        sa.Column("item_id", sa.String(40), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("namespace", sa.JSON(), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("value", sa.JSON(), nullable=True),
        sa.Column("api_key_id", sa.Integer(), nullable=True),
        sa.Column("run_id", sa.String(40), nullable=True),
        sa.Column("tool_call_id", sa.String(200), nullable=True),
        sa.Column("created_at", _TZ, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_memory_item_history_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_memory_item_history"),
    )
    op.create_index(
        "ix_memory_item_history_item_id", "memory_item_history", ["item_id", "created_at"]
    )
    statements = _SQLITE if op.get_bind().dialect.name == "sqlite" else _POSTGRES
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS memory_items_after_{trigger}")
        op.execute("DROP TABLE IF EXISTS memory_items_fts")
    else:
        op.execute("DROP INDEX IF EXISTS ix_memory_items_search_text_fts")
    op.drop_index("ix_memory_item_history_item_id", table_name="memory_item_history")
    op.drop_table("memory_item_history")
    op.drop_index("ix_memory_items_account_id_expires_at", table_name="memory_items")
    op.drop_table("memory_items")
