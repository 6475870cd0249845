"""Migrations 0007 and 0010 on each backend: domains stored before 0007 get a token of their own
and start unverified; rows inserted without a token (bulk loads) get one from the database;
0010 counts a verified domain as checked when it was verified, and its downgrade keeps the
table's triggers."""

from __future__ import annotations

import asyncio
import re

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.db.migrate import alembic_config, upgrade
from atrium.kit.time import utcnow
from atrium.settings import Settings

_accounts = sa.table("accounts", sa.column("id"), sa.column("name"), sa.column("created_at"))
_domains = sa.table(
    "domains",
    sa.column("id"),
    sa.column("account_id"),
    sa.column("name"),
    sa.column("created_at"),
    sa.column("updated_at"),
    sa.column("verification_token"),
    sa.column("verified_at"),
)
_counts = sa.table("domain_counts", sa.column("total"))
_TOKEN = re.compile(r"^[0-9a-f]{32}$")


async def _insert(url: str, names: list[str]) -> None:
    engine = create_async_engine(url)
    now = utcnow()
    async with engine.begin() as connection:
        account = await connection.scalar(sa.select(_accounts.c.id).limit(1))
        if account is None:
            await connection.execute(sa.insert(_accounts).values(name="bulk", created_at=now))
            account = await connection.scalar(sa.select(_accounts.c.id).limit(1))
        await connection.execute(
            sa.insert(_domains),
            [
                {"account_id": account, "name": name, "created_at": now, "updated_at": now}
                for name in names
            ],
        )
    await engine.dispose()


async def test_every_domain_gets_its_own_token_and_starts_unverified(empty_database: str) -> None:
    settings = Settings(_env_file=None, database_url=empty_database)
    await asyncio.to_thread(upgrade, settings, "0006")
    await _insert(empty_database, ["old-1.test", "old-2.test"])
    await asyncio.to_thread(upgrade, settings)
    await _insert(empty_database, ["bulk-1.test", "bulk-2.test"])  # no token given

    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        columns = (_domains.c.name, _domains.c.verification_token, _domains.c.verified_at)
        rows = (await connection.execute(sa.select(*columns).order_by(_domains.c.id))).all()
    await engine.dispose()
    assert [row[0] for row in rows] == ["old-1.test", "old-2.test", "bulk-1.test", "bulk-2.test"]
    assert all(_TOKEN.match(row[1]) for row in rows), rows
    assert len({row[1] for row in rows}) == 4
    assert all(row[2] is None for row in rows)


async def _rows(url: str, *columns: sa.ColumnClause[object]) -> list[tuple[object, ...]]:
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        found = await connection.execute(sa.select(*columns).order_by(_domains.c.id))
        rows = [tuple(row) for row in found]
    await engine.dispose()
    return rows


async def test_verified_domains_count_as_checked_and_the_downgrade_keeps_triggers(
    empty_database: str,
) -> None:
    settings = Settings(_env_file=None, database_url=empty_database)
    await asyncio.to_thread(upgrade, settings, "0009")
    await _insert(empty_database, ["verified.test", "unverified.test"])
    engine = create_async_engine(empty_database)
    verified_at = utcnow()
    async with engine.begin() as connection:
        await connection.execute(
            sa.update(_domains)
            .where(_domains.c.name == "verified.test")
            .values(verified_at=verified_at)
        )
    await engine.dispose()
    await asyncio.to_thread(upgrade, settings)

    checked = sa.column("verification_checked_at")
    rows = await _rows(empty_database, _domains.c.name, checked, sa.column("verification_error"))
    assert [(name, error) for name, _, error in rows] == [
        ("verified.test", None),
        ("unverified.test", None),
    ]
    assert rows[0][1] is not None and rows[1][1] is None

    await asyncio.to_thread(command.downgrade, alembic_config(settings), "0009")
    await _insert(empty_database, ["after-downgrade.test"])  # no token given
    tokens = await _rows(empty_database, _domains.c.verification_token)
    assert all(_TOKEN.match(str(token)) for (token,) in tokens), tokens
    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        total = await connection.scalar(sa.select(_counts.c.total))
    await engine.dispose()
    assert total == 3
