"""Agents CRUD through HTTP: shapes, defaults, PUT merge, soft delete, account isolation."""

from __future__ import annotations

import re
from typing import Any

import httpx

from tests.conftest import KeyFactory, bearer

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
DEFAULT_CONFIG = {
    "model": "atrium:offline",
    "temperature": 0.7,
    "instructions": "",
    "max_output_tokens": None,
    "tools": ["write_artifact", "list_artifacts", "read_artifact"],
    "output_schema": None,
    "context_budget": None,
    "memory": None,
    "blocks": [],
}


async def _create(
    client: httpx.AsyncClient, auth: dict[str, str], **body: object
) -> dict[str, Any]:
    response = await client.post("/v1/agents", json={"name": "Agent", **body}, headers=auth)
    assert response.status_code == 201, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_create_with_only_a_name_takes_the_defaults(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post("/v1/agents", json={"name": "  Researcher  "}, headers=auth)
    assert response.status_code == 201
    agent = response.json()
    assert set(agent) == {
        "agent_id", "name", "description", "version", "config", "created_at", "updated_at"
    }  # fmt: skip
    assert agent["agent_id"].startswith("agt_")
    assert agent["name"] == "Researcher"
    assert agent["description"] == ""
    assert agent["config"] == DEFAULT_CONFIG
    assert TIMESTAMP.match(agent["created_at"]) and TIMESTAMP.match(agent["updated_at"])


async def test_create_with_a_full_config(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    config = {
        "model": "openai-compatible:llama3.1:8b",
        "temperature": 0,
        "instructions": "Be brief.",
        "max_output_tokens": 512,
        "tools": ["read_artifact"],
    }
    agent = await _create(client, auth, description="Summaries", config=config)
    assert agent["description"] == "Summaries"
    assert agent["config"] == {
        **config,
        "temperature": 0.0,
        "output_schema": None,
        "context_budget": None,
        "memory": None,
        "blocks": [],
    }


async def test_partial_config_is_merged_over_the_defaults(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent = await _create(client, auth, config={"model": "openai:gpt-4o-mini", "temperature": 2})
    assert agent["config"] == {**DEFAULT_CONFIG, "model": "openai:gpt-4o-mini", "temperature": 2}


async def test_get_returns_what_create_returned(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await _create(client, auth)
    response = await client.get(f"/v1/agents/{created['agent_id']}", headers=auth)
    assert response.status_code == 200
    assert response.json() == created


async def test_list_holds_live_agents_in_creation_order(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    ids = [(await _create(client, auth, name=f"agent {n}"))["agent_id"] for n in range(3)]
    await client.delete(f"/v1/agents/{ids[1]}", headers=auth)
    response = await client.get("/v1/agents", headers=auth)
    assert response.status_code == 200
    assert set(response.json()) == {"data"}
    assert [agent["agent_id"] for agent in response.json()["data"]] == [ids[0], ids[2]]


async def test_put_replaces_fields_present_and_merges_config_keys(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await _create(
        client, auth, description="old", config={"instructions": "keep me", "temperature": 0.2}
    )
    response = await client.put(
        f"/v1/agents/{created['agent_id']}",
        json={"name": "Renamed", "config": {"temperature": 1.5, "max_output_tokens": 100}},
        headers=auth,
    )
    assert response.status_code == 200
    updated = response.json()
    assert updated["name"] == "Renamed"
    assert updated["description"] == "old"
    assert updated["config"] == {
        **DEFAULT_CONFIG,
        "instructions": "keep me",
        "temperature": 1.5,
        "max_output_tokens": 100,
    }
    assert updated["created_at"] == created["created_at"]
    assert updated["updated_at"] >= created["updated_at"]
    fetched = await client.get(f"/v1/agents/{created['agent_id']}", headers=auth)
    assert fetched.json() == updated


async def test_put_can_clear_max_output_tokens_and_empty_the_tools(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await _create(client, auth, config={"max_output_tokens": 10})
    response = await client.put(
        f"/v1/agents/{created['agent_id']}",
        json={"config": {"max_output_tokens": None, "tools": []}},
        headers=auth,
    )
    assert response.status_code == 200
    assert response.json()["config"]["max_output_tokens"] is None
    assert response.json()["config"]["tools"] == []


async def test_empty_put_changes_nothing(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    created = await _create(client, auth, description="same")
    response = await client.put(f"/v1/agents/{created['agent_id']}", json={}, headers=auth)
    assert response.status_code == 200
    assert {k: v for k, v in response.json().items() if k != "updated_at"} == {
        k: v for k, v in created.items() if k != "updated_at"
    }


async def test_delete_answers_then_the_agent_is_gone(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = (await _create(client, auth))["agent_id"]
    response = await client.delete(f"/v1/agents/{agent_id}", headers=auth)
    assert response.status_code == 200
    assert response.json() == {"agent_id": agent_id, "deleted": True}
    for method in ("GET", "DELETE"):
        gone = await client.request(method, f"/v1/agents/{agent_id}", headers=auth)
        assert gone.status_code == 404
        assert gone.json()["error"]["code"] == "NOT_FOUND"
    put = await client.put(f"/v1/agents/{agent_id}", json={"name": "x"}, headers=auth)
    assert put.status_code == 404


async def test_unknown_agent_is_404_with_the_error_body(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.get("/v1/agents/agt_nope", headers=auth)
    assert response.status_code == 404
    assert response.json() == {
        "error": {
            "code": "NOT_FOUND",
            "message": "no agent with id 'agt_nope'",
            "details": {"parameter": "agent_id"},
        }
    }


async def test_ids_that_cannot_be_agents_are_404(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for agent_id in ("%00", "agt_" + "x" * 500, "%ff%fe", "agt_a%20b"):
        response = await client.get(f"/v1/agents/{agent_id}", headers=auth)
        assert response.status_code == 404
        assert len(response.json()["error"]["message"]) < 100


async def test_another_accounts_agent_is_invisible(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    agent_id = (await _create(client, auth))["agent_id"]
    other = bearer((await make_key()).key)
    assert (await client.get("/v1/agents", headers=other)).json() == {"data": []}
    assert (await client.get(f"/v1/agents/{agent_id}", headers=other)).status_code == 404
    put = await client.put(f"/v1/agents/{agent_id}", json={"name": "mine"}, headers=other)
    assert put.status_code == 404
    assert (await client.delete(f"/v1/agents/{agent_id}", headers=other)).status_code == 404
    assert (await client.get(f"/v1/agents/{agent_id}", headers=auth)).json()["name"] == "Agent"


async def test_another_key_of_the_same_account_sees_the_agents(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    who = (await client.get("/v1/account", headers=auth)).json()["account"]["name"]
    agent_id = (await _create(client, auth))["agent_id"]
    second = bearer((await make_key(account=who, tier="premium")).key)
    assert (await client.get(f"/v1/agents/{agent_id}", headers=second)).status_code == 200
