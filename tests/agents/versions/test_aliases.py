"""Aliases: names pointing at versions, with an optional weighted split; bad input is a 400."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.agents.versions.conftest import AGENTS, RUNS, edit, new_agent
from tests.conftest import KeyFactory, bearer


async def _put(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, name: str, body: object
) -> httpx.Response:
    return await client.put(f"{AGENTS}/{agent_id}/aliases/{name}", json=body, headers=auth)


async def test_alias_crud(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    created = await _put(client, auth, agent_id, "prod", {"version": 1})
    assert created.status_code == 201, created.text
    assert created.json()["version"] == 1
    assert created.json()["split"] is None
    moved = await _put(
        client, auth, agent_id, "prod", {"version": 1, "split": {"version": 2, "weight": 0.25}}
    )
    assert moved.status_code == 200
    assert moved.json()["split"] == {"version": 2, "weight": 0.25}
    await _put(client, auth, agent_id, "canary", {"version": 2})
    listed = (await client.get(f"{AGENTS}/{agent_id}/aliases", headers=auth)).json()["data"]
    assert [(a["name"], a["version"]) for a in listed] == [("canary", 2), ("prod", 1)]
    one = await client.get(f"{AGENTS}/{agent_id}/aliases/prod", headers=auth)
    assert one.json() == moved.json() | {"updated_at": one.json()["updated_at"]}
    deleted = await client.delete(f"{AGENTS}/{agent_id}/aliases/prod", headers=auth)
    assert deleted.json() == {"agent_id": agent_id, "name": "prod", "deleted": True}
    gone = await client.get(f"{AGENTS}/{agent_id}/aliases/prod", headers=auth)
    assert gone.status_code == 404
    assert gone.json()["error"]["details"]["parameter"] == "alias"


@pytest.mark.parametrize(
    ("name", "body", "parameter"),
    [
        ("prod", {"version": 9}, "version"),
        ("prod", {"version": 0}, "version"),
        ("prod", {"version": "1"}, "version"),
        ("prod", {}, "version"),
        ("prod", {"version": 1, "split": {"version": 9, "weight": 0.5}}, "split.version"),
        ("prod", {"version": 1, "split": {"version": 1, "weight": 0.5}}, "split.version"),
        ("prod", {"version": 1, "split": {"version": 2, "weight": 1.5}}, "split.weight"),
        ("prod", {"version": 1, "split": {"version": 2, "weight": -0.1}}, "split.weight"),
        ("prod", {"version": 1, "split": {"version": 2}}, "split.weight"),
        ("prod", {"version": 1, "other": 1}, "other"),
        ("3", {"version": 1}, "alias"),
        ("Prod", {"version": 1}, "alias"),
        ("a" * 33, {"version": 1}, "alias"),
        ("v2", {"version": 1}, "alias"),  # names version 2
        ("v10", {"version": 1}, "alias"),
    ],
)
async def test_bad_aliases_are_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], name: str, body: object, parameter: str
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    response = await _put(client, auth, agent_id, name, body)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter
    listed = await client.get(f"{AGENTS}/{agent_id}/aliases", headers=auth)
    assert listed.json()["data"] == []  # nothing half-written


async def test_v_and_a_number_is_a_version_never_an_alias(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    refused = await _put(client, auth, agent_id, "v2", {"version": 1})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert (error["code"], error["details"]["parameter"]) == ("INVALID_PARAMETER", "alias")
    assert "'v2' names version 2" in error["message"], error["message"]
    # `v0` and `v01` name no version: aliases as before, and runs follow them.
    for name in ("v0", "v01"):
        made = await _put(client, auth, agent_id, name, {"version": 1})
        assert made.status_code == 201, made.text
        run = await client.post(
            RUNS, json={"prompt": "hi", "agent_id": f"{agent_id}@{name}"}, headers=auth
        )
        assert run.status_code == 201, run.text
        assert run.json()["agent_version"] == 1
    listed = (await client.get(f"{AGENTS}/{agent_id}/aliases", headers=auth)).json()["data"]
    assert [alias["name"] for alias in listed] == ["v0", "v01"]


async def test_another_accounts_agent_is_not_found(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    other = bearer((await make_key()).key)
    agent_id = await new_agent(client, auth)
    response = await _put(client, other, agent_id, "prod", {"version": 1})
    assert response.status_code == 404
    versions = await client.get(f"{AGENTS}/{agent_id}/versions", headers=other)
    assert versions.status_code == 404


async def test_concurrent_puts_of_one_new_alias_all_succeed(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    answers = await asyncio.gather(
        *(_put(client, auth, agent_id, "prod", {"version": 1 + index % 2}) for index in range(8))
    )
    assert {answer.status_code for answer in answers} <= {200, 201}, [a.text for a in answers]
    listed = (await client.get(f"{AGENTS}/{agent_id}/aliases", headers=auth)).json()["data"]
    assert [alias["name"] for alias in listed] == ["prod"]
