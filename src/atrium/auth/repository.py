"""SQL for accounts and API keys."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Account, ApiKey


async def get_account_by_name(session: AsyncSession, name: str) -> Account | None:
    return await session.scalar(select(Account).where(Account.name == name))


async def count_accounts(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(Account)) or 0)


async def get_key_with_account(
    session: AsyncSession, key_hash: str
) -> tuple[ApiKey, Account] | None:
    row = (
        await session.execute(
            select(ApiKey, Account)
            .join(Account, Account.id == ApiKey.account_id)
            .where(ApiKey.key_hash == key_hash)
        )
    ).first()
    return None if row is None else (row[0], row[1])


async def list_keys(session: AsyncSession) -> Sequence[tuple[ApiKey, Account]]:
    rows = await session.execute(
        select(ApiKey, Account).join(Account, Account.id == ApiKey.account_id).order_by(ApiKey.id)
    )
    return [(key, account) for key, account in rows.tuples()]


async def get_key(session: AsyncSession, key_id: int) -> ApiKey | None:
    return await session.get(ApiKey, key_id)


async def find_key_by_prefix(session: AsyncSession, prefix: str) -> Sequence[ApiKey]:
    return (await session.scalars(select(ApiKey).where(ApiKey.prefix.startswith(prefix)))).all()
