"""Queries of the `files` table; every one is scoped to an account but `existing`, which the
sweep of bytes without a row asks across accounts (`files.orphans`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import undefer

from atrium.db.models import StoredFile
from atrium.kit.cursor import Position, older_than


async def get(
    session: AsyncSession, *, account_id: int, file_id: str, content: bool = False
) -> StoredFile | None:
    query = select(StoredFile).where(StoredFile.id == file_id, StoredFile.account_id == account_id)
    if content:
        query = query.options(undefer(StoredFile.content))
    found: StoredFile | None = (await session.execute(query)).scalar_one_or_none()
    return found


async def of_ids(
    session: AsyncSession, *, account_id: int, file_ids: Sequence[str], content: bool = False
) -> dict[str, StoredFile]:
    """The account's files among `file_ids`, by id."""
    if not file_ids:
        return {}
    query = select(StoredFile).where(
        StoredFile.id.in_(set(file_ids)), StoredFile.account_id == account_id
    )
    if content:
        query = query.options(undefer(StoredFile.content))
    return {row.id: row for row in (await session.execute(query)).scalars()}


async def list_page(
    session: AsyncSession, *, account_id: int, limit: int, after: Position | None
) -> Sequence[StoredFile]:
    """Up to `limit + 1` of the account's files, newest first, after `after`."""
    query = select(StoredFile).where(StoredFile.account_id == account_id)
    if after is not None:
        query = query.where(older_than(StoredFile.created_at, StoredFile.id, after))
    query = query.order_by(StoredFile.created_at.desc(), StoredFile.id.desc()).limit(limit + 1)
    return (await session.execute(query)).scalars().all()


async def remove(session: AsyncSession, *, account_id: int, file_id: str) -> StoredFile | None:
    """Delete the file's row; the row as it was, or None when the account has no such file."""
    found = await get(session, account_id=account_id, file_id=file_id)
    if found is None:
        return None
    await session.execute(
        delete(StoredFile).where(StoredFile.id == file_id, StoredFile.account_id == account_id)
    )
    return found


async def existing(session: AsyncSession, file_ids: Sequence[str]) -> set[str]:
    """The ids among `file_ids` that have a row, whichever account's."""
    if not file_ids:
        return set()
    query = select(StoredFile.id).where(StoredFile.id.in_(set(file_ids)))
    return set((await session.execute(query)).scalars())
