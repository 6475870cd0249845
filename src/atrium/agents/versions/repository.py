"""SQL for agent versions and aliases."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Agent, AgentAlias, AgentVersion
from atrium.kit.time import utcnow


async def latest(session: AsyncSession, *, agent_id: str) -> AgentVersion | None:
    return await session.scalar(
        select(AgentVersion)
        .where(AgentVersion.agent_id == agent_id)
        .order_by(AgentVersion.number.desc())
        .limit(1)
    )


async def get(session: AsyncSession, *, agent_id: str, number: int) -> AgentVersion | None:
    return await session.scalar(
        select(AgentVersion).where(AgentVersion.agent_id == agent_id, AgentVersion.number == number)
    )


async def number_of(session: AsyncSession, *, agent_id: str, version_id: str) -> int | None:
    """The number of the agent's version with this id (a cursor names a page's last row)."""
    return await session.scalar(
        select(AgentVersion.number).where(
            AgentVersion.agent_id == agent_id, AgentVersion.id == version_id
        )
    )


async def page(
    session: AsyncSession, *, agent_id: str, below: int | None, limit: int
) -> Sequence[AgentVersion]:
    """Up to `limit` versions numbered below `below` (all when None), newest first."""
    query = select(AgentVersion).where(AgentVersion.agent_id == agent_id)
    if below is not None:
        query = query.where(AgentVersion.number < below)
    return (await session.scalars(query.order_by(AgentVersion.number.desc()).limit(limit))).all()


async def next_number(session: AsyncSession, *, agent_id: str) -> int:
    """Count the agent's version up by one and return the new number. An UPDATE: concurrent
    edits of one agent take turns on its row (PostgreSQL) or the one writer (SQLite), so no
    two get the same number."""
    number = await session.scalar(
        update(Agent)
        .where(Agent.id == agent_id)
        .values(version=Agent.version + 1)
        .returning(Agent.version)
        .execution_options(synchronize_session=False)
    )
    if number is None:  # pragma: no cover - the caller holds the agent
        raise RuntimeError(f"agent {agent_id} vanished")
    return int(number)


async def insert_first(session: AsyncSession, *, values: dict[str, Any]) -> None:
    """Insert an agent's version 1 unless it has one (a default agent created by two requests
    at once gets one)."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    await session.execute(
        insert(AgentVersion)
        .values(number=1, created_at=utcnow(), **values)
        .on_conflict_do_nothing(index_elements=[AgentVersion.agent_id, AgentVersion.number])
    )


# --- aliases ------------------------------------------------------------------------------------
async def aliases(session: AsyncSession, *, agent_id: str) -> Sequence[AgentAlias]:
    return (
        await session.scalars(
            select(AgentAlias).where(AgentAlias.agent_id == agent_id).order_by(AgentAlias.name)
        )
    ).all()


async def alias(session: AsyncSession, *, agent_id: str, name: str) -> AgentAlias | None:
    return await session.get(AgentAlias, (agent_id, name))


async def put_alias(session: AsyncSession, *, values: dict[str, Any]) -> AgentAlias:
    """Insert the alias or point the existing one elsewhere, in one statement: two requests
    creating the same name at once both succeed, the later one's target kept."""
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    now = utcnow()
    statement = insert(AgentAlias).values(created_at=now, updated_at=now, **values)
    targets = ("version", "split_version", "split_weight", "updated_at")
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=[AgentAlias.agent_id, AgentAlias.name],
            set_={name: statement.excluded[name] for name in targets},
        )
    )
    found = await session.scalar(
        select(AgentAlias)
        .where(AgentAlias.agent_id == values["agent_id"], AgentAlias.name == values["name"])
        .execution_options(populate_existing=True)
    )
    if found is None:  # pragma: no cover - written just above, in this transaction
        raise RuntimeError("the alias vanished")
    return found


async def delete_alias(session: AsyncSession, *, agent_id: str, name: str) -> None:
    await session.execute(
        delete(AgentAlias).where(AgentAlias.agent_id == agent_id, AgentAlias.name == name)
    )


# --- the version a new run uses (point reads) ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class AliasTarget:
    version: int
    split_version: int | None
    split_weight: float | None


_LIVE_AGENT = (
    (Agent.id == bindparam("b_agent_id"))
    & (Agent.account_id == bindparam("b_account_id"))
    & Agent.deleted_at.is_(None)
)
_ALIAS_OF_LIVE_AGENT = (
    select(AgentAlias.version, AgentAlias.split_version, AgentAlias.split_weight)
    .join(Agent, Agent.id == AgentAlias.agent_id)
    .where(_LIVE_AGENT, AgentAlias.name == bindparam("b_name"))
)
_VERSION_OF_LIVE_AGENT = (
    select(AgentVersion.config)
    .join(Agent, Agent.id == AgentVersion.agent_id)
    .where(_LIVE_AGENT, AgentVersion.number == bindparam("b_number"))
)
_LIVE_AGENT_EXISTS = select(Agent.id).where(_LIVE_AGENT)


def alias_target(
    conn: Connection, *, account_id: int, agent_id: str, name: str
) -> AliasTarget | None:
    row = conn.execute(
        _ALIAS_OF_LIVE_AGENT,
        {"b_agent_id": agent_id, "b_account_id": account_id, "b_name": name},
    ).first()
    return None if row is None else AliasTarget(*row)


def version_config(
    conn: Connection, *, account_id: int, agent_id: str, number: int
) -> dict[str, Any] | None:
    row = conn.execute(
        _VERSION_OF_LIVE_AGENT,
        {"b_agent_id": agent_id, "b_account_id": account_id, "b_number": number},
    ).first()
    return None if row is None else dict(row.config)


def agent_exists(conn: Connection, *, account_id: int, agent_id: str) -> bool:
    found = conn.execute(
        _LIVE_AGENT_EXISTS, {"b_agent_id": agent_id, "b_account_id": account_id}
    ).first()
    return found is not None
