"""Rules for agents: validation of names and configs, soft deletion, the default agent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents import repository
from atrium.agents.config import default_config
from atrium.agents.errors import AgentNotFound
from atrium.agents.memory_config import check_tool_names
from atrium.agents.model_check import ModelCheck, ProviderNames
from atrium.agents.schemas import AgentCreate, AgentUpdate
from atrium.agents.sealing import tools_to_store
from atrium.agents.versions import service as agent_versions
from atrium.db.models import Agent
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from atrium.providers import repository as providers_repository

DEFAULT_AGENT_NAME = "Default agent"
DEFAULT_AGENT_DESCRIPTION = "Runs that name no agent use this one."


def _account_providers(session: AsyncSession, account_id: int) -> ProviderNames:
    async def names() -> list[str]:
        return await providers_repository.names(session, account_id=account_id)

    return names


async def _config_to_store(
    data_config: dict[str, Any],
    *,
    before: dict[str, Any] | None,
    models: ModelCheck,
    account_providers: ProviderNames,
) -> dict[str, Any]:
    settings = models.settings
    config = default_config(settings.default_model) | (before or {}) | data_config
    if before is None or "model" in data_config:
        # A new agent's model (given or the default) and a changed one must be usable now;
        # an unchanged model is not re-checked, so an update of another key never fails on it.
        await models.require(str(config["model"]), account_providers=account_providers)
    if "tools" in data_config:
        config["tools"] = await tools_to_store(
            data_config["tools"], before=before, settings=settings
        )
    if "memory" in data_config or "tools" in data_config:
        parameter = "config.tools" if "tools" in data_config else "config.memory"
        check_tool_names(config, parameter=parameter)
    return config


async def create_agent(
    session: AsyncSession, *, account_id: int, data: AgentCreate, models: ModelCheck
) -> Agent:
    config = await _config_to_store(
        data.config.given(),
        before=None,
        models=models,
        account_providers=_account_providers(session, account_id),
    )
    agent = Agent(
        id=new_id("agt"),
        account_id=account_id,
        name=data.name,
        description=data.description,
        config=config,
    )
    session.add(agent)
    await session.flush()
    await agent_versions.record_first(session, agent)
    return agent


async def list_agents(session: AsyncSession, *, account_id: int) -> Sequence[Agent]:
    """The account's agents that are not deleted, oldest first."""
    return await repository.list_live(session, account_id=account_id)


async def get_agent(session: AsyncSession, *, account_id: int, agent_id: str) -> Agent:
    """The account's agent; NotFound when unknown, deleted or another account's."""
    agent = await repository.get_live(session, account_id=account_id, agent_id=agent_id)
    if agent is None:
        raise AgentNotFound(agent_id)
    return agent


async def update_agent(
    session: AsyncSession, *, account_id: int, agent_id: str, data: AgentUpdate, models: ModelCheck
) -> Agent:
    agent = await get_agent(session, account_id=account_id, agent_id=agent_id)
    given = data.given()
    if "name" in given and data.name is not None:
        agent.name = data.name
    if "description" in given and data.description is not None:
        agent.description = data.description
    if "config" in given and data.config is not None:
        # A new dict, not an in-place change: the JSON column only notices reassignment.
        agent.config = await _config_to_store(
            data.config.given(),
            before=agent.config,
            models=models,
            account_providers=_account_providers(session, account_id),
        )
    agent.updated_at = utcnow()
    await session.flush()
    if "config" in given:
        await agent_versions.record(session, agent)  # none when the config hashes the same
    return agent


async def delete_agent(session: AsyncSession, *, account_id: int, agent_id: str) -> Agent:
    """Soft delete: the agent disappears from the API, its usage stays in analytics."""
    agent = await get_agent(session, account_id=account_id, agent_id=agent_id)
    agent.deleted_at = utcnow()
    await session.flush()
    return agent


async def get_or_create_default_agent(
    session: AsyncSession, *, account_id: int, model: str
) -> Agent:
    """The account's default agent, created the first time it is needed, on `model`
    (the deployment's `ATRIUM_DEFAULT_MODEL`)."""
    agent = await repository.get_default(session, account_id=account_id)
    if agent is not None:
        return agent
    await repository.insert_default_if_missing(
        session,
        account_id=account_id,
        values={
            "id": new_id("agt"),
            "name": DEFAULT_AGENT_NAME,
            "description": DEFAULT_AGENT_DESCRIPTION,
            "config": default_config(model),
        },
    )
    agent = await repository.get_default(session, account_id=account_id)
    if agent is None:  # pragma: no cover - the insert above or a concurrent one made it
        raise RuntimeError("the default agent could not be created")
    await agent_versions.record_first(session, agent)
    return agent
