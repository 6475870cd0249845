"""`/v1/agents/{agent_id}/versions` and `/v1/agents/{agent_id}/aliases`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response, status

from atrium.agents.errors import AgentNotFound
from atrium.agents.versions import aliases, service
from atrium.agents.versions.errors import (
    AliasNameInvalid,
    AliasNotFound,
    AliasVersionUnknown,
    VersionNotFound,
)
from atrium.agents.versions.schemas import (
    AgentVersionDiff,
    AgentVersionList,
    AgentVersionOut,
    AliasDeleted,
    AliasIn,
    AliasList,
    AliasOut,
    VersionNumber,
)
from atrium.http.deps import CurrentPrincipal, SessionDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery

router = APIRouter(prefix="/agents", tags=["agent versions"], strict_content_type=False)
AgentId = Annotated[str, Path(description="The agent's id (`agt_…`).", max_length=40)]
Number = Annotated[int, Path(description="The version's number.", ge=1, le=2**31 - 1)]
AliasName = Annotated[
    str,
    Path(
        description="The alias's name (`prod`, `canary`).",
        pattern=aliases.ALIAS_PATTERN.pattern,
    ),
]
_VERSION = error_responses(AgentNotFound, VersionNotFound)
_ALIAS = error_responses(AgentNotFound, AliasNotFound, AliasNameInvalid)


@router.get("/{agent_id}/versions", responses=error_responses(AgentNotFound))
async def list_versions(
    agent_id: AgentId,
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> AgentVersionList:
    """The agent's versions, newest first: every config it has had, numbered from 1. Follow
    `next_cursor` (as `cursor`) while `has_more`."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    found, next_cursor = await service.list_versions(
        session, agent=agent, limit=limit, cursor=cursor
    )
    return AgentVersionList(
        data=[AgentVersionOut.of(version, live_number=agent.version) for version in found],
        has_more=next_cursor is not None,
        next_cursor=next_cursor,
    )


@router.get("/{agent_id}/versions/{number}", responses=_VERSION)
async def get_version(
    agent_id: AgentId, number: Number, session: SessionDep, principal: CurrentPrincipal
) -> AgentVersionOut:
    """One version of the agent."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    version = await service.get_version(session, agent=agent, number=number)
    return AgentVersionOut.of(version, live_number=agent.version)


@router.get(
    "/{agent_id}/versions/{number}/diff",
    responses=_VERSION,
    response_model=AgentVersionDiff,
    response_model_exclude_unset=True,
)
async def diff_versions(
    agent_id: AgentId,
    number: Number,
    against: Annotated[VersionNumber, Query(description="The version compared with.")],
    session: SessionDep,
    principal: CurrentPrincipal,
) -> AgentVersionDiff:
    """The JSON Patch (RFC 6902) that turns version `against`'s config into version
    `number`'s; each `replace` and `remove` also carries the value it drops as `before`."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    return await service.diff(session, agent=agent, number=number, against=against)


@router.post("/{agent_id}/versions/{number}/restore", responses=_VERSION)
async def restore_version(
    agent_id: AgentId,
    number: Number,
    session: SessionDep,
    principal: CurrentPrincipal,
    response: Response,
) -> AgentVersionOut:
    """Make version `number`'s config the agent's again: a new version (201), the live one.
    When it already is the live config, nothing changes and the live version comes back
    (200)."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    before = agent.version
    version = await service.restore(session, agent=agent, number=number)
    if version.number != before:
        response.status_code = status.HTTP_201_CREATED
    return AgentVersionOut.of(version, live_number=agent.version)


@router.get("/{agent_id}/aliases", responses=error_responses(AgentNotFound))
async def list_aliases(
    agent_id: AgentId, session: SessionDep, principal: CurrentPrincipal
) -> AliasList:
    """The agent's aliases, by name."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    found = await aliases.list_aliases(session, agent=agent)
    return AliasList(data=[AliasOut.of(alias) for alias in found])


@router.get("/{agent_id}/aliases/{alias}", responses=_ALIAS)
async def get_alias(
    agent_id: AgentId, alias: AliasName, session: SessionDep, principal: CurrentPrincipal
) -> AliasOut:
    """One alias of the agent."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    return AliasOut.of(await aliases.get_alias(session, agent=agent, name=alias))


@router.put(
    "/{agent_id}/aliases/{alias}",
    responses={
        status.HTTP_201_CREATED: {"model": AliasOut, "description": "The alias was created."},
        **error_responses(AgentNotFound, AliasNameInvalid, AliasVersionUnknown),
    },
)
async def put_alias(
    agent_id: AgentId,
    alias: AliasName,
    body: AliasIn,
    session: SessionDep,
    principal: CurrentPrincipal,
    response: Response,
) -> AliasOut:
    """Create the alias (201) or point it at other versions (200). Runs name it as
    `agt_…@alias`; with `split`, a `split.weight` share of them use `split.version`."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    made, created = await aliases.put_alias(session, agent=agent, name=alias, data=body)
    if created:
        response.status_code = status.HTTP_201_CREATED
    return AliasOut.of(made)


@router.delete("/{agent_id}/aliases/{alias}", responses=_ALIAS)
async def delete_alias(
    agent_id: AgentId, alias: AliasName, session: SessionDep, principal: CurrentPrincipal
) -> AliasDeleted:
    """Delete the alias; runs naming it are refused from then on (400 on `agent_id`)."""
    agent = await service.live_agent(session, account_id=principal.account_id, agent_id=agent_id)
    await aliases.delete_alias(session, agent=agent, name=alias)
    return AliasDeleted(agent_id=agent.id, name=alias)
