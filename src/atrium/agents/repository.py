"""SQL for agents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents.config import AGENT_ID_PATTERN, AgentConfig, stored_config
from atrium.db.engine import Database
from atrium.db.models import Agent
from atrium.db.models.agent import DEFAULT_AGENT_PREDICATE
from atrium.kit.time import utcnow


@dataclass(frozen=True, slots=True)
class AgentForRun:
    id: str
    config: AgentConfig
    # The agent version `config` is (`agent_versions`), which the run records.
    version: int | None = None


_LIVE_AGENT_OF_ACCOUNT = select(Agent.id, Agent.config, Agent.version).where(
    Agent.account_id == bindparam("b_account_id"), Agent.deleted_at.is_(None)
)
# Every run creation reads one of these: built once (see `runs.lifecycle.run_queue` on why).
_RUN_AGENT_NAMED = _LIVE_AGENT_OF_ACCOUNT.where(Agent.id == bindparam("b_agent_id"))
_RUN_AGENT_DEFAULT = _LIVE_AGENT_OF_ACCOUNT.where(Agent.is_default)


async def run_agent(db: Database, *, account_id: int, agent_id: str | None) -> AgentForRun | None:
    """Id and config of the agent a new run uses: the named one unless deleted, else the
    account's default. A point read (`Database.point_read`): runs on every run creation."""
    if agent_id is not None and not AGENT_ID_PATTERN.match(agent_id):
        return None

    def read(conn: Connection) -> AgentForRun | None:
        if agent_id is None:
            row = conn.execute(_RUN_AGENT_DEFAULT, {"b_account_id": account_id}).first()
        else:
            params = {"b_account_id": account_id, "b_agent_id": agent_id}
            row = conn.execute(_RUN_AGENT_NAMED, params).first()
        if row is None:
            return None
        return AgentForRun(id=row.id, config=stored_config(row.config), version=row.version)

    return await db.point_read(read)


async def get_live(session: AsyncSession, *, account_id: int, agent_id: str) -> Agent | None:
    """The account's agent with this id, unless it is deleted."""
    if not AGENT_ID_PATTERN.match(agent_id):
        return None
    return await session.scalar(
        select(Agent).where(
            Agent.id == agent_id, Agent.account_id == account_id, Agent.deleted_at.is_(None)
        )
    )


async def get_any(session: AsyncSession, *, account_id: int, agent_id: str) -> Agent | None:
    """The account's agent with this id, deleted or not."""
    if not AGENT_ID_PATTERN.match(agent_id):
        return None
    return await session.scalar(
        select(Agent).where(Agent.id == agent_id, Agent.account_id == account_id)
    )


async def list_live(session: AsyncSession, *, account_id: int) -> Sequence[Agent]:
    return (
        await session.scalars(
            select(Agent)
            .where(Agent.account_id == account_id, Agent.deleted_at.is_(None))
            .order_by(Agent.created_at, Agent.id)
        )
    ).all()


async def get_default(session: AsyncSession, *, account_id: int) -> Agent | None:
    return await session.scalar(
        select(Agent).where(
            Agent.account_id == account_id, Agent.is_default, Agent.deleted_at.is_(None)
        )
    )


async def insert_default_if_missing(
    session: AsyncSession, *, account_id: int, values: dict[str, Any]
) -> None:
    """Insert the default agent unless the account has one; concurrent callers insert one row.

    On PostgreSQL the losing insert waits for the winner's commit, then does nothing.
    """
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    now = utcnow()
    statement = (
        insert(Agent)
        .values(account_id=account_id, is_default=True, created_at=now, updated_at=now, **values)
        .on_conflict_do_nothing(
            index_elements=[Agent.account_id], index_where=DEFAULT_AGENT_PREDICATE
        )
    )
    await session.execute(statement)
