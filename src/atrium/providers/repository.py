"""SQL of providers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, cast

from sqlalchemy import Connection, Table, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.engine import Database
from atrium.db.models import Provider
from atrium.settings import PROVIDER_NAME

_PROVIDERS = cast(Table, Provider.__table__)
# What `new_id("prv")` makes.
ID_PATTERN: Final = re.compile(r"^prv_[A-Za-z0-9]{1,36}$")
# Providers one account may have: each is a server its runs may reach, and the list of names
# is read whole (a run's own model on an unknown provider, the message that lists them).
MAX_PER_ACCOUNT: Final = 100


@dataclass(frozen=True, slots=True)
class StoredProvider:
    """What a run on a provider needs of its row (secrets still sealed)."""

    name: str
    base_url: str
    api_key: str | None
    headers: dict[str, str]


async def count(session: AsyncSession, *, account_id: int) -> int:
    found = await session.scalar(
        select(func.count()).select_from(_PROVIDERS).where(_PROVIDERS.c.account_id == account_id)
    )
    return int(found or 0)


async def list_of_account(session: AsyncSession, *, account_id: int) -> Sequence[Provider]:
    return (
        await session.scalars(
            select(Provider).where(Provider.account_id == account_id).order_by(Provider.name)
        )
    ).all()


async def get(session: AsyncSession, *, account_id: int, key: str) -> Provider | None:
    """The account's provider whose id, else whose name, is `key`."""
    of_account = select(Provider).where(Provider.account_id == account_id)
    if ID_PATTERN.match(key):
        found = await session.scalar(of_account.where(Provider.id == key))
        if found is not None:
            return found
    if not PROVIDER_NAME.match(key):  # nobody's name (and never sent to the database)
        return None
    return await session.scalar(of_account.where(Provider.name == key))


async def name_taken(
    session: AsyncSession, *, account_id: int, name: str, other_than: str | None = None
) -> bool:
    query = select(_PROVIDERS.c.id).where(
        _PROVIDERS.c.account_id == account_id, _PROVIDERS.c.name == name
    )
    if other_than is not None:
        query = query.where(_PROVIDERS.c.id != other_than)
    return await session.scalar(query.limit(1)) is not None


async def names(session: AsyncSession, *, account_id: int) -> list[str]:
    """The names of the account's providers (in the request's transaction)."""
    found = await session.scalars(_NAMES_OF_ACCOUNT, {"b_account_id": account_id})
    return list(found.all())


# Read at the start of every run on a named provider, and by a run's own `config.model`:
# built once, executed with the account's id (see `runs.lifecycle.run_queue` on why).
_NAMES_OF_ACCOUNT = (
    select(_PROVIDERS.c.name)
    .where(_PROVIDERS.c.account_id == bindparam("b_account_id"))
    .limit(MAX_PER_ACCOUNT)
)
_NAMED = select(
    _PROVIDERS.c.name, _PROVIDERS.c.base_url, _PROVIDERS.c.api_key, _PROVIDERS.c.headers
).where(
    _PROVIDERS.c.account_id == bindparam("b_account_id"), _PROVIDERS.c.name == bindparam("b_name")
)


async def names_of_account(db: Database, *, account_id: int) -> list[str]:
    """The names of the account's providers: a point read (`Database.point_read`)."""

    def read(conn: Connection) -> list[str]:
        rows = conn.execute(_NAMES_OF_ACCOUNT, {"b_account_id": account_id})
        return [row.name for row in rows]

    return await db.point_read(read)


def named(conn: Connection, *, account_id: int, name: str) -> StoredProvider | None:
    """Point read: the account's provider called `name`, by the unique (account, name) index."""
    row = conn.execute(_NAMED, {"b_account_id": account_id, "b_name": name}).first()
    if row is None:
        return None
    return StoredProvider(
        name=row.name, base_url=row.base_url, api_key=row.api_key, headers=dict(row.headers or {})
    )
