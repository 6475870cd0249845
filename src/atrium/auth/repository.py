"""SQL for accounts and API keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Account, ApiKey


async def get_account_by_name(session: AsyncSession, name: str) -> Account | None:
    return await session.scalar(select(Account).where(Account.name == name))


async def count_accounts(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(Account)) or 0)


# Every request runs it: built once, executed with the key's hash (building a SELECT and its
# cache key costs more CPU than SQLite's lookup through the unique index).
_KEY_WITH_ACCOUNT = (
    select(
        ApiKey.id,
        ApiKey.key_hash,
        ApiKey.tier,
        ApiKey.revoked_at,
        Account.id.label("account_id"),
        Account.name.label("account_name"),
    )
    .join(Account, Account.id == ApiKey.account_id)
    .where(ApiKey.key_hash == bindparam("b_key_hash"))
)


def get_key_with_account(conn: Connection, key_hash: str) -> Row[*tuple[Any, ...]] | None:
    """The key's row with its account's id and name. Every request runs it, through
    `Database.point_read` (a unique index)."""
    row: Row[*tuple[Any, ...]] | None = conn.execute(
        _KEY_WITH_ACCOUNT, {"b_key_hash": key_hash}
    ).first()
    return row


# Open event streams run it every `sse_auth_recheck_seconds`: built once, a primary-key read.
_KEY_IS_ACTIVE = select(ApiKey.id).where(
    ApiKey.id == bindparam("b_key_id"), ApiKey.revoked_at.is_(None)
)


def key_is_active(conn: Connection, key_id: int) -> bool:
    """Whether the key still exists unrevoked (through `Database.point_read`)."""
    return conn.execute(_KEY_IS_ACTIVE, {"b_key_id": key_id}).first() is not None


async def list_keys(session: AsyncSession) -> Sequence[tuple[ApiKey, Account]]:
    rows = await session.execute(
        select(ApiKey, Account).join(Account, Account.id == ApiKey.account_id).order_by(ApiKey.id)
    )
    return [(key, account) for key, account in rows.tuples()]


async def get_key(session: AsyncSession, key_id: int) -> ApiKey | None:
    return await session.get(ApiKey, key_id)


async def find_key_by_prefix(session: AsyncSession, prefix: str) -> Sequence[ApiKey]:
    return (await session.scalars(select(ApiKey).where(ApiKey.prefix.startswith(prefix)))).all()
