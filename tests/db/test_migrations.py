"""The migrations build exactly the schema the models declare, on each backend: a column,
index or constraint added to one and not the other fails here (Alembic's own comparison)."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.db.base import Base

# What exists only in migrations, by design, for searching domain names
# (docs/decisions/0021-domain-search.md):
# SQLite's FTS5 virtual table with its shadow tables, PostgreSQL's trigram index.
MIGRATION_ONLY_TABLES = ("domains_fts", "memory_items_fts")
MIGRATION_ONLY_INDEXES = {"ix_domains_name_trgm", "ix_memory_items_search_text_fts"}


def _compared(name: str | None, kind: str, _parent: object) -> bool:
    if kind == "table":
        return not str(name).startswith(MIGRATION_ONLY_TABLES)
    return not (kind == "index" and name in MIGRATION_ONLY_INDEXES)


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"include_name": _compared})
    return list(compare_metadata(context, Base.metadata))


async def test_the_migrated_schema_is_the_models_schema(database_url: str) -> None:
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as connection:
            differences = await connection.run_sync(_differences)
    finally:
        await engine.dispose()
    assert differences == []
