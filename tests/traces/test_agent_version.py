"""The run's span names the agent and the version whose config the run executed
(`gen_ai.agent.name`, `gen_ai.agent.version`), whichever way the run named it."""

from __future__ import annotations

import httpx

from tests.runs.helpers import RUNS, wait_finished
from tests.traces.helpers import trace_of

AGENTS = "/v1/agents"


async def _root_attributes(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> dict[str, object]:
    created = await client.post(RUNS, json={"prompt": "hello", "agent_id": agent_id}, headers=auth)
    assert created.status_code == 201, created.text
    run = await wait_finished(client, auth, created.json()["run_id"])
    assert run["status"] == "completed", run
    spans = (await trace_of(client, auth, run["run_id"]))["spans"]
    [root] = [span for span in spans if span["parent_span_id"] in (None, "")]
    attributes: dict[str, object] = root["attributes"]
    return attributes


async def test_the_run_span_carries_the_agent_version_it_ran(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    made = await client.post(
        AGENTS, json={"name": "Reporter", "config": {"instructions": "one"}}, headers=auth
    )
    agent_id = made.json()["agent_id"]
    edited = await client.put(
        f"{AGENTS}/{agent_id}", json={"config": {"instructions": "two"}}, headers=auth
    )
    assert edited.status_code == 200, edited.text
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json={"version": 1}, headers=auth)

    live = await _root_attributes(client, auth, agent_id)
    pinned = await _root_attributes(client, auth, f"{agent_id}@1")
    aliased = await _root_attributes(client, auth, f"{agent_id}@prod")
    assert [live["gen_ai.agent.version"], pinned["gen_ai.agent.version"]] == ["2", "1"]
    assert aliased["gen_ai.agent.version"] == "1"
    for attributes in (live, pinned, aliased):
        assert attributes["gen_ai.agent.id"] == agent_id
        assert attributes["gen_ai.agent.name"] == "Reporter"
