"""Queries of the `evals` table and of the runs an eval names; every one is scoped to an
account."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Evaluation, Run
from atrium.kit.cursor import Position, older_than


async def get(session: AsyncSession, *, account_id: int, eval_id: str) -> Evaluation | None:
    query = select(Evaluation).where(Evaluation.id == eval_id, Evaluation.account_id == account_id)
    found: Evaluation | None = (await session.execute(query)).scalar_one_or_none()
    return found


async def list_page(
    session: AsyncSession, *, account_id: int, limit: int, after: Position | None
) -> Sequence[Evaluation]:
    """Up to `limit + 1` of the account's evals, newest first, after `after`."""
    query = select(Evaluation).where(Evaluation.account_id == account_id)
    if after is not None:
        query = query.where(older_than(Evaluation.created_at, Evaluation.id, after))
    query = query.order_by(Evaluation.created_at.desc(), Evaluation.id.desc()).limit(limit + 1)
    return (await session.execute(query)).scalars().all()


async def remove(session: AsyncSession, *, account_id: int, eval_id: str) -> bool:
    result = await session.execute(
        delete(Evaluation).where(Evaluation.id == eval_id, Evaluation.account_id == account_id)
    )
    return bool(getattr(result, "rowcount", 0))


async def runs_of(
    session: AsyncSession, *, account_id: int, run_ids: Sequence[str]
) -> dict[str, Run]:
    """The account's runs among `run_ids`, by id (another account's are left out)."""
    if not run_ids:
        return {}
    query = select(Run).where(Run.id.in_(set(run_ids)), Run.account_id == account_id)
    return {row.id: row for row in (await session.execute(query)).scalars()}
