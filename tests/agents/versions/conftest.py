"""Agent versions run on the offline model; no provider is needed."""

from __future__ import annotations

import httpx
import pytest

AGENTS = "/v1/agents"
RUNS = "/api/v1/public/agent/runs"


async def new_agent(client: httpx.AsyncClient, auth: dict[str, str], **config: object) -> str:
    body = {"name": "Versioned", "config": {"instructions": "v1", **config}}
    response = await client.post(AGENTS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def edit(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, **config: object
) -> dict[str, object]:
    response = await client.put(f"{AGENTS}/{agent_id}", json={"config": config}, headers=auth)
    assert response.status_code == 200, response.text
    agent: dict[str, object] = response.json()
    return agent


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    # The split test creates 1,000 runs through one key.
    return {"rate_limit_standard": "100000/hour"}
