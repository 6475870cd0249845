"""SQL of memory blocks: by label, pages of an account's blocks, their versions."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import MemoryBlock, MemoryBlockVersion
from atrium.kit.cursor import Position, older_than


async def by_label(
    session: AsyncSession, *, account_id: int, label: str, for_update: bool = False
) -> MemoryBlock | None:
    """The block; `for_update` locks its row on PostgreSQL until the transaction ends (two
    agents appending at once each see the other's text). SQLite's writers are serial."""
    query = select(MemoryBlock).where(
        MemoryBlock.account_id == account_id, MemoryBlock.label == label
    )
    if for_update:
        query = query.with_for_update()
    return await session.scalar(query)


async def by_labels(
    session: AsyncSession, *, account_id: int, labels: Sequence[str]
) -> Sequence[MemoryBlock]:
    return (
        await session.scalars(
            select(MemoryBlock).where(
                MemoryBlock.account_id == account_id, MemoryBlock.label.in_(list(labels))
            )
        )
    ).all()


async def count(session: AsyncSession, *, account_id: int) -> int:
    found = await session.scalar(
        select(func.count()).select_from(MemoryBlock).where(MemoryBlock.account_id == account_id)
    )
    return int(found or 0)


async def list_page(
    session: AsyncSession, *, account_id: int, limit: int, position: Position | None
) -> Sequence[MemoryBlock]:
    query = select(MemoryBlock).where(MemoryBlock.account_id == account_id)
    if position is not None:
        query = query.where(older_than(MemoryBlock.created_at, MemoryBlock.id, position))
    query = query.order_by(MemoryBlock.created_at.desc(), MemoryBlock.id.desc()).limit(limit + 1)
    return (await session.scalars(query)).all()


async def versions_page(
    session: AsyncSession, *, account_id: int, label: str, limit: int, position: Position | None
) -> Sequence[MemoryBlockVersion]:
    query = select(MemoryBlockVersion).where(
        MemoryBlockVersion.account_id == account_id, MemoryBlockVersion.label == label
    )
    if position is not None:
        query = query.where(
            older_than(MemoryBlockVersion.created_at, MemoryBlockVersion.id, position)
        )
    query = query.order_by(
        MemoryBlockVersion.created_at.desc(), MemoryBlockVersion.id.desc()
    ).limit(limit + 1)
    return (await session.scalars(query)).all()
