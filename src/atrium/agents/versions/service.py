"""Rules of agent versions: each change of an agent's config is a new version (an unchanged
hash is none), versions are read, compared and restored, never changed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents import repository as agents_repository
from atrium.agents.errors import AgentNotFound
from atrium.agents.schemas import AgentConfigOut
from atrium.agents.versions import repository
from atrium.agents.versions.diff import json_patch
from atrium.agents.versions.errors import VersionNotFound
from atrium.agents.versions.schemas import AgentVersionDiff, PatchOperation
from atrium.db.models import Agent, AgentVersion
from atrium.kit.canonical_json import content_hash
from atrium.kit.cursor import decode_cursor, encode_cursor
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow


async def record_first(session: AsyncSession, agent: Agent) -> None:
    """Version 1 of a new agent: its config as created."""
    await repository.insert_first(
        session,
        values={
            "id": new_id("ver"),
            "agent_id": agent.id,
            "config": dict(agent.config),
            "content_hash": content_hash(agent.config),
        },
    )


async def record(
    session: AsyncSession, agent: Agent, *, restored_from: int | None = None
) -> AgentVersion | None:
    """A new version for the agent's config as it now is, unless it hashes as its latest
    version does (None then). The agent's `version` becomes the new number."""
    digest = content_hash(agent.config)
    current = await repository.latest(session, agent_id=agent.id)
    if current is not None and current.content_hash == digest:
        return None
    number = await repository.next_number(session, agent_id=agent.id)
    version = AgentVersion(
        id=new_id("ver"),
        agent_id=agent.id,
        number=number,
        config=dict(agent.config),
        content_hash=digest,
        restored_from=restored_from,
        created_at=utcnow(),
    )
    session.add(version)
    agent.version = number
    await session.flush()
    return version


async def live_agent(session: AsyncSession, *, account_id: int, agent_id: str) -> Agent:
    agent = await agents_repository.get_live(session, account_id=account_id, agent_id=agent_id)
    if agent is None:
        raise AgentNotFound(agent_id)
    return agent


async def get_version(
    session: AsyncSession, *, agent: Agent, number: int, parameter: str = "version"
) -> AgentVersion:
    version = await repository.get(session, agent_id=agent.id, number=number)
    if version is None:
        raise VersionNotFound(agent.id, number, parameter=parameter)
    return version


async def list_versions(
    session: AsyncSession, *, agent: Agent, limit: int, cursor: str | None
) -> tuple[Sequence[AgentVersion], str | None]:
    """A page of the agent's versions, newest first, and the cursor of the next page."""
    below = None
    if cursor:
        _, version_id = decode_cursor(cursor)
        below = await repository.number_of(session, agent_id=agent.id, version_id=version_id)
        if below is None:
            return [], None  # a cursor of another agent's list names nothing here
    rows = await repository.page(session, agent_id=agent.id, below=below, limit=limit + 1)
    found = rows[:limit]
    if len(rows) <= limit:
        return found, None
    return found, encode_cursor(found[-1].created_at, found[-1].id)


def _shown(config: dict[str, Any]) -> dict[str, Any]:
    # As the API shows a config: sealed MCP header values are `"***"`, never compared out.
    return AgentConfigOut.of(config).model_dump(mode="json")


async def diff(
    session: AsyncSession, *, agent: Agent, number: int, against: int
) -> AgentVersionDiff:
    """The JSON Patch from version `against` to version `number`."""
    version = await get_version(session, agent=agent, number=number)
    base = await get_version(session, agent=agent, number=against, parameter="against")
    operations = json_patch(_shown(base.config), _shown(version.config))
    return AgentVersionDiff(
        agent_id=agent.id,
        version=number,
        against=against,
        patch=[PatchOperation(**operation) for operation in operations],
    )


async def restore(session: AsyncSession, *, agent: Agent, number: int) -> AgentVersion:
    """Make version `number`'s config the agent's again, as a new version (the live one). A
    version whose config already is the live one's is no change: the live version comes back."""
    version = await get_version(session, agent=agent, number=number)
    agent.config = dict(version.config)  # a new dict: the JSON column notices reassignment
    agent.updated_at = utcnow()
    await session.flush()
    made = await record(session, agent, restored_from=number)
    if made is not None:
        return made
    return await get_version(session, agent=agent, number=agent.version)
