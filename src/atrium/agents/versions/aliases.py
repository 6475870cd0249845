"""Rules of aliases: names that point at an agent's versions, with an optional weighted split."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents.versions import repository
from atrium.agents.versions.errors import AliasNameInvalid, AliasNotFound, AliasVersionUnknown
from atrium.agents.versions.schemas import AliasIn
from atrium.db.models import Agent, AgentAlias

# Starts with a letter: `agt_…@3` is version 3, so a name can never be read as a number.
ALIAS_PATTERN: Final = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
# `v` and a number without a leading zero names that version (`agt_…@v3` is `agt_…@3`), so no
# alias is given such a name; `v0` and `v01` name no version and may be aliases.
VERSION_NAME: Final = re.compile(r"^v[1-9][0-9]*$")


def checked_name(name: str) -> str:
    if not ALIAS_PATTERN.match(name):
        raise AliasNameInvalid(name)
    return name


def settable_name(name: str) -> str:
    """A name an alias may be given: `checked_name`, and not one that names a version. (One
    stored before `v3` meant a version can still be read and deleted, not pointed anew.)"""
    if VERSION_NAME.match(checked_name(name)):
        raise AliasNameInvalid(name, reserved=True)
    return name


async def list_aliases(session: AsyncSession, *, agent: Agent) -> Sequence[AgentAlias]:
    """The agent's aliases by name."""
    return await repository.aliases(session, agent_id=agent.id)


async def get_alias(session: AsyncSession, *, agent: Agent, name: str) -> AgentAlias:
    found = await repository.alias(session, agent_id=agent.id, name=checked_name(name))
    if found is None:
        raise AliasNotFound(agent.id, name)
    return found


async def _require_version(
    session: AsyncSession, *, agent: Agent, number: int, parameter: str
) -> None:
    if await repository.get(session, agent_id=agent.id, number=number) is None:
        raise AliasVersionUnknown(parameter, f"agent {agent.id} has no version {number}")


async def put_alias(
    session: AsyncSession, *, agent: Agent, name: str, data: AliasIn
) -> tuple[AgentAlias, bool]:
    """Create the alias or point it elsewhere; whether it was created."""
    name = settable_name(name)
    await _require_version(session, agent=agent, number=data.version, parameter="version")
    split = data.split
    if split is not None:
        if split.version == data.version:
            raise AliasVersionUnknown("split.version", "must differ from version")
        await _require_version(
            session, agent=agent, number=split.version, parameter="split.version"
        )
    created = await repository.alias(session, agent_id=agent.id, name=name) is None
    found = await repository.put_alias(
        session,
        values={
            "agent_id": agent.id,
            "name": name,
            "version": data.version,
            "split_version": None if split is None else split.version,
            "split_weight": None if split is None else split.weight,
        },
    )
    return found, created


async def delete_alias(session: AsyncSession, *, agent: Agent, name: str) -> None:
    found = await get_alias(session, agent=agent, name=name)
    await repository.delete_alias(session, agent_id=agent.id, name=found.name)
