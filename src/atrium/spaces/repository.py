"""SQL for spaces. An account holds few spaces, so lists filter and count directly."""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Space
from atrium.phpshort.listing import ListParams


async def get(session: AsyncSession, *, account_id: int, space_id: int) -> Space | None:
    return await session.scalar(
        select(Space).where(Space.id == space_id, Space.account_id == account_id)
    )


async def name_exists(
    session: AsyncSession, *, account_id: int, name: str, other_than: int | None = None
) -> bool:
    query = select(Space.id).where(Space.account_id == account_id, Space.name == name)
    if other_than is not None:
        query = query.where(Space.id != other_than)
    return (await session.scalar(query)) is not None


async def list_page(
    session: AsyncSession, *, account_id: int, params: ListParams
) -> tuple[list[Space], int]:
    where: list[ColumnElement[bool]] = [Space.account_id == account_id]
    if params.search is not None:
        where.append(Space.name.icontains(params.search, autoescape=True))
    total = int(await session.scalar(select(func.count()).select_from(Space).where(*where)) or 0)
    if params.offset >= total:
        return [], total
    keys = [Space.name, Space.id] if params.sort_by == "name" else [Space.id]
    order = [key.desc() if params.descending else key.asc() for key in keys]
    query = select(Space).where(*where).order_by(*order)
    rows = await session.scalars(query.limit(params.per_page).offset(params.offset))
    return list(rows), total
