"""Which agent a new run gets: the named one, or the account's default, created on demand."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.conftest import KeyFactory, bearer

RUNS = "/api/v1/public/agent/runs"


async def _run_agent(client: httpx.AsyncClient, auth: dict[str, str], **body: str) -> str:
    response = await client.post(RUNS, json={"prompt": "hello", **body}, headers=auth)
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def test_no_agent_id_creates_the_default_agent_once(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    assert (await client.get("/v1/agents", headers=auth)).json() == {"data": []}
    first = await _run_agent(client, auth)
    again = await _run_agent(client, auth)
    assert again == first
    listed = (await client.get("/v1/agents", headers=auth)).json()["data"]
    assert [agent["agent_id"] for agent in listed] == [first]
    assert listed[0]["config"]["model"] == "atrium:offline"


async def test_concurrent_first_runs_share_one_default_agent(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    ids = await asyncio.gather(*(_run_agent(client, auth) for _ in range(5)))
    assert len(set(ids)) == 1
    assert len((await client.get("/v1/agents", headers=auth)).json()["data"]) == 1


async def test_a_deleted_default_agent_is_replaced_on_demand(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    first = await _run_agent(client, auth)
    assert (await client.delete(f"/v1/agents/{first}", headers=auth)).status_code == 200
    second = await _run_agent(client, auth)
    assert second != first


async def test_named_agent_is_used(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    created = await client.post("/v1/agents", json={"name": "Writer"}, headers=auth)
    agent_id = created.json()["agent_id"]
    assert await _run_agent(client, auth, agent_id=agent_id) == agent_id


@pytest.mark.parametrize("case", ["unknown", "deleted", "foreign", "malformed"])
async def test_unknown_deleted_or_foreign_agent_is_not_found(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory, case: str
) -> None:
    agent_id = {"unknown": "agt_doesnotexist", "malformed": "no such\x00id"}.get(case, "")
    if case in ("deleted", "foreign"):
        owner = bearer((await make_key()).key) if case == "foreign" else auth
        created = await client.post("/v1/agents", json={"name": "x"}, headers=owner)
        agent_id = created.json()["agent_id"]
        if case == "deleted":
            await client.delete(f"/v1/agents/{agent_id}", headers=auth)
    response = await client.post(RUNS, json={"prompt": "hello", "agent_id": agent_id}, headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"parameter": "agent_id"}
    runs = (await client.get(RUNS, headers=auth)).json()["data"]
    assert runs == []
