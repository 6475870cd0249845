"""Fixtures of the tests that run agents (runs, runtime, worker, reliability): agents made
through the API, and the worker's model registry for pydantic-ai test models. A folder's
conftest imports the ones it uses."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.runs.events import event_store
from atrium.runtime.llm_models import ModelRegistry

AgentFactory = Callable[..., Awaitable[str]]


@pytest.fixture
def make_agent(client: httpx.AsyncClient, auth: dict[str, str]) -> AgentFactory:
    """`await make_agent(model="test:slow", tools=[...])`: an agent made through /v1/agents."""

    async def factory(headers: dict[str, str] | None = None, **config: Any) -> str:
        response = await client.post(
            "/v1/agents", json={"name": "test agent", "config": config}, headers=headers or auth
        )
        assert response.status_code == 201, response.text
        agent_id: str = response.json()["agent_id"]
        return agent_id

    return factory


@pytest.fixture
def models(app: FastAPI) -> ModelRegistry:
    """The worker's model registry: tests register pydantic-ai test models on it."""
    registry: ModelRegistry = app.state.workers.runtime.models
    return registry


@pytest.fixture
async def batcher(db: Database) -> AsyncIterator[WriteBatcher]:
    """A write batcher of the test's database, as the worker makes it (a batch's event rows
    inserted together)."""
    made = WriteBatcher(db, around_batch=event_store.batched)
    made.start()
    yield made
    await made.stop()
