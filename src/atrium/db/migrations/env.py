"""Alembic environment: runs migrations over the async engine of `ATRIUM_DATABASE_URL`."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from typing import Any

from alembic import context
from alembic.runtime.migration import MigrationContext, MigrationInfo
from sqlalchemy import pool
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

import atrium.db.models  # noqa: F401  (registers every table on the metadata)
from atrium.db.base import Base

config = context.config
target_metadata = Base.metadata


def _record_step(
    ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any], run_args: Mapping[str, Any]
) -> None:
    """Note each revision applied, for the caller to say what it did (`atrium migrate`)."""
    applied = config.attributes.get("applied")
    if applied is not None and step.is_upgrade:
        applied.append(step.up_revision_id)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        on_version_apply=_record_step,
    )
    with context.begin_transaction():
        context.run_migrations()
        config.attributes["current"] = context.get_context().get_current_revision()


async def _run_async(url: str) -> None:
    engine = create_async_engine(url, poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def _url() -> str:
    url = config.attributes.get("database_url")
    if url is None:
        from atrium.settings import get_settings

        url = get_settings().database_url
    return str(url)


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    asyncio.run(_run_async(_url()))
