"""domains and spaces

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Besides the tables, two dialect-specific pieces keep domain lists fast at a million rows:
- a substring-search index: FTS5 trigram table `domains_fts` (external content, kept by
  triggers) on SQLite; `pg_trgm` GIN index on `domains.name` on PostgreSQL;
- `domain_counts`, the number of domains per account, kept by triggers (row triggers on SQLite,
  statement triggers with transition tables on PostgreSQL, so a bulk insert updates it once).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _name(length: int) -> sa.types.TypeEngine[str]:
    return sa.String(length).with_variant(sa.String(length, collation="C"), "postgresql")


_SQLITE = [
    """CREATE VIRTUAL TABLE domains_fts USING fts5(
        name, content='domains', content_rowid='id', tokenize='trigram')""",
    """CREATE TRIGGER domains_after_insert AFTER INSERT ON domains BEGIN
        INSERT INTO domains_fts(rowid, name) VALUES (new.id, new.name);
        INSERT INTO domain_counts(account_id, total) VALUES (new.account_id, 1)
            ON CONFLICT(account_id) DO UPDATE SET total = total + 1;
    END""",
    """CREATE TRIGGER domains_after_delete AFTER DELETE ON domains BEGIN
        INSERT INTO domains_fts(domains_fts, rowid, name) VALUES ('delete', old.id, old.name);
        UPDATE domain_counts SET total = total - 1 WHERE account_id = old.account_id;
    END""",
    """CREATE TRIGGER domains_after_update AFTER UPDATE OF name, account_id ON domains BEGIN
        INSERT INTO domains_fts(domains_fts, rowid, name) VALUES ('delete', old.id, old.name);
        INSERT INTO domains_fts(rowid, name) VALUES (new.id, new.name);
        UPDATE domain_counts SET total = total - 1 WHERE account_id = old.account_id;
        INSERT INTO domain_counts(account_id, total) VALUES (new.account_id, 1)
            ON CONFLICT(account_id) DO UPDATE SET total = total + 1;
    END""",
]

_POSTGRES = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX ix_domains_name_trgm ON domains USING gin (name gin_trgm_ops)",
    """CREATE FUNCTION domain_counts_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO domain_counts (account_id, total)
            SELECT account_id, count(*) FROM added GROUP BY account_id
            ON CONFLICT (account_id)
            DO UPDATE SET total = domain_counts.total + EXCLUDED.total;
        RETURN NULL;
    END $$""",
    """CREATE FUNCTION domain_counts_remove() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE domain_counts AS c SET total = c.total - r.n
            FROM (SELECT account_id, count(*) AS n FROM removed GROUP BY account_id) AS r
            WHERE c.account_id = r.account_id;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER domains_count_insert AFTER INSERT ON domains
        REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION domain_counts_add()""",
    """CREATE TRIGGER domains_count_delete AFTER DELETE ON domains
        REFERENCING OLD TABLE AS removed
        FOR EACH STATEMENT EXECUTE FUNCTION domain_counts_remove()""",
]


def upgrade() -> None:
    op.create_table(
        "spaces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("name", _name(32), nullable=False),
        sa.Column("color", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_spaces_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_spaces"),
        sa.UniqueConstraint("account_id", "name", name="uq_spaces_account_id_name"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_spaces_account_id_id", "spaces", ["account_id", "id"])

    op.create_table(
        "domains",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("name", _name(255), nullable=False),
        sa.Column("index_page", sa.Text(), nullable=True),
        sa.Column("not_found_page", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_domains_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_domains"),
        sa.UniqueConstraint("name", name="uq_domains_name"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_domains_account_id_id", "domains", ["account_id", "id"])
    op.create_index("ix_domains_account_id_name", "domains", ["account_id", "name", "id"])

    op.create_table(
        "domain_counts",
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name="fk_domain_counts_account_id_accounts",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("account_id", name="pk_domain_counts"),
    )

    statements = _SQLITE if op.get_bind().dialect.name == "sqlite" else _POSTGRES
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("domains_after_insert", "domains_after_delete", "domains_after_update"):
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS domains_fts")
    else:
        op.execute("DROP TRIGGER IF EXISTS domains_count_insert ON domains")
        op.execute("DROP TRIGGER IF EXISTS domains_count_delete ON domains")
        op.execute("DROP FUNCTION IF EXISTS domain_counts_add()")
        op.execute("DROP FUNCTION IF EXISTS domain_counts_remove()")
    op.drop_table("domain_counts")
    op.drop_table("domains")
    op.drop_table("spaces")
