"""`/v1/agents`: create, list, read, update and delete agents."""

from __future__ import annotations

from fastapi import APIRouter, status

from atrium.agents import service
from atrium.agents.errors import AgentNotFound, ModelUnusable, ToolsRefused
from atrium.agents.model_check import ModelCheckDep
from atrium.agents.schemas import AgentCreate, AgentDeleted, AgentList, AgentOut, AgentUpdate
from atrium.http.deps import CurrentPrincipal, SessionDep
from atrium.http.openapi import error_responses

# A body sent without Content-Type is read as JSON (what this group takes) rather than refused
# as "not an object": the gateway already answers 415 for any other declared type.
router = APIRouter(prefix="/agents", tags=["agents"], strict_content_type=False)
_NOT_FOUND = error_responses(AgentNotFound)


@router.get("")
async def list_agents(session: SessionDep, principal: CurrentPrincipal) -> AgentList:
    """Every agent of the account that is not deleted, oldest first."""
    agents = await service.list_agents(session, account_id=principal.account_id)
    return AgentList(data=[AgentOut.of(agent) for agent in agents])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(ModelUnusable, ToolsRefused),
)
async def create_agent(
    body: AgentCreate, session: SessionDep, principal: CurrentPrincipal, models: ModelCheckDep
) -> AgentOut:
    """Create an agent. `name` is required; config keys left out take the server defaults.
    The model's provider must be configured on the server (400 on `config.model` saying what
    is missing)."""
    agent = await service.create_agent(
        session, account_id=principal.account_id, data=body, models=models
    )
    return AgentOut.of(agent)


@router.get("/{agent_id}", responses=_NOT_FOUND)
async def get_agent(agent_id: str, session: SessionDep, principal: CurrentPrincipal) -> AgentOut:
    """One agent of the account (404 when unknown, deleted or another account's)."""
    agent = await service.get_agent(session, account_id=principal.account_id, agent_id=agent_id)
    return AgentOut.of(agent)


@router.put("/{agent_id}", responses=error_responses(AgentNotFound, ModelUnusable, ToolsRefused))
async def update_agent(
    agent_id: str,
    body: AgentUpdate,
    session: SessionDep,
    principal: CurrentPrincipal,
    models: ModelCheckDep,
) -> AgentOut:
    """Replace the fields present in the body; `config` keys present replace only those keys.
    An MCP header sent back as `"***"` keeps its stored value."""
    agent = await service.update_agent(
        session, account_id=principal.account_id, agent_id=agent_id, data=body, models=models
    )
    return AgentOut.of(agent)


@router.delete("/{agent_id}", responses=_NOT_FOUND)
async def delete_agent(
    agent_id: str, session: SessionDep, principal: CurrentPrincipal
) -> AgentDeleted:
    """Delete an agent. Its past runs keep their usage, which analytics still reports."""
    agent = await service.delete_agent(session, account_id=principal.account_id, agent_id=agent_id)
    return AgentDeleted(agent_id=agent.id)
