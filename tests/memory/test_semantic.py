"""`/v1/memory/search` with `mode: semantic` over the built-in offline embedder: the nearest
item first, namespace prefix, `filter` and TTL honoured, accounts kept apart."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from atrium.memory.vectors import vectors_of
from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import create_run, wait_finished

ITEMS = "/v1/memory/items"
SEARCH = "/v1/memory/search"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"embeddings_model": "offline"}


async def _put(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> None:
    response = await client.put(ITEMS, json=body, headers=auth)
    assert response.status_code == 200, response.text


async def _keys(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> list[str]:
    response = await client.post(SEARCH, json={"mode": "semantic", **body}, headers=auth)
    assert response.status_code == 200, response.text
    return [item["key"] for item in response.json()["data"]]


async def test_nearest_first_with_prefix_filter_and_ttl(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    facts = {
        "coffee": "Alice drinks her espresso without sugar every morning",
        "pets": "Alice has two cats called Miso and Tofu",
        "work": "Alice works as a database administrator in Lisbon",
    }
    for key, text in facts.items():
        await _put(
            client, auth, namespace=["users", "alice"], key=key, value={"t": "fact"}, text=text
        )
    await _put(
        client,
        auth,
        namespace=["users", "bob"],
        key="coffee",
        value={"t": "x"},
        text="Bob drinks espresso with sugar",
    )

    keys = await _keys(
        client,
        auth,
        query="which espresso does she drink",
        limit=3,
        namespace_prefix=["users", "alice"],
    )
    assert keys[0] == "coffee" and set(keys) == set(facts)
    assert (await _keys(client, auth, query="cats names", limit=1))[0] == "pets"
    assert await _keys(client, auth, query="espresso", filter={"t": "x"}) == ["coffee"]

    await _put(client, auth, namespace=["short"], key="k", value="espresso espresso", ttl_seconds=1)
    assert "k" in await _keys(client, auth, query="espresso espresso", namespace_prefix=["short"])
    await asyncio.sleep(1.2)
    assert await _keys(client, auth, query="espresso espresso", namespace_prefix=["short"]) == []


async def test_another_account_sees_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    await _put(client, auth, namespace=["users"], key="secret", value="the vault code is 1234")
    other = bearer((await make_key()).key)
    assert await _keys(client, other, query="vault code") == []


@pytest.mark.parametrize("settings_overrides", [{}])
async def test_semantic_without_embedder_names_mode(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(SEARCH, json={"mode": "semantic", "query": "x"}, headers=auth)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "mode"


async def test_an_agents_write_is_found_by_meaning(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """Items a run's memory_write stores get a vector too, as the API's puts do."""
    memory = {"read": [["users"]], "write": [["users"]]}
    agent = await client.post(
        "/v1/agents", json={"name": "m", "config": {"tools": [], "memory": memory}}, headers=auth
    )
    assert agent.status_code == 201, agent.text
    write = 'call memory_write {"namespace": ["users"], "key": "pets", "value": "two cats"}'
    run = await create_run(client, auth, write, agent_id=agent.json()["agent_id"])
    done = await wait_finished(client, auth, run["run_id"])
    assert "Remembered 'pets'" in done["result"], done
    await _put(client, auth, namespace=["users"], key="job", value="database administrator")
    assert (await _keys(client, auth, query="cats at home"))[0] == "pets"


async def _memory_agent(client: httpx.AsyncClient, auth: dict[str, str]) -> str:
    memory = {"read": [["users"]], "write": [["users"]]}
    agent = await client.post(
        "/v1/agents", json={"name": "m", "config": {"tools": [], "memory": memory}}, headers=auth
    )
    assert agent.status_code == 201, agent.text
    agent_id: str = agent.json()["agent_id"]
    return agent_id


async def _tool_result(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, line: str
) -> str:
    run = await create_run(client, auth, line, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    result: str = done["result"]
    return result


async def test_an_agent_searches_by_meaning(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """`memory_search` with `by_meaning`: found without a shared word (`cat` is not in `two
    cats at home`, which search by words needs), under the agent's readable prefixes only."""
    await _put(client, auth, namespace=["users"], key="pets", value="two cats at home")
    await _put(client, auth, namespace=["users"], key="job", value="database administrator")
    await _put(client, auth, namespace=["secrets"], key="cat", value="the cat door code")
    agent_id = await _memory_agent(client, auth)
    words = await _tool_result(client, auth, agent_id, 'call memory_search {"query": "cat"}')
    assert "memory_search returned: Nothing remembered matches 'cat'." in words
    meaning = await _tool_result(
        client,
        auth,
        agent_id,
        'call memory_search {"query": "cat", "by_meaning": true, "limit": 1}',
    )
    assert 'memory_search returned: [{"namespace":["users"],"key":"pets"' in meaning, meaning
    assert "secrets" not in meaning.split("memory_search returned:")[1]


@pytest.mark.parametrize("settings_overrides", [{}])
async def test_an_agents_search_by_meaning_without_embedder_is_a_failed_call(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await _memory_agent(client, auth)
    line = 'call memory_search {"query": "cat", "by_meaning": true}'
    result = await _tool_result(client, auth, agent_id, line)
    assert "memory_search failed: search by meaning needs an embeddings model" in result, result
    assert "ATRIUM_EMBEDDINGS_MODEL" in result


async def test_an_agents_search_by_meaning_keeps_the_accounts_vectors(
    client: httpx.AsyncClient, auth: dict[str, str], app: FastAPI
) -> None:
    """The worker's `memory_search` by meaning loads the account's vectors into the process's
    index once, as the API's search does, instead of scanning the account at every call; a
    later write is found (the index catches up)."""
    await _put(client, auth, namespace=["users"], key="pets", value="two cats at home")
    agent_id = await _memory_agent(client, auth)
    vectors = vectors_of(app.state.db, app.state.settings)
    before = vectors.nbytes  # the app serves other tests' accounts too
    search = 'call memory_search {"query": "cat", "by_meaning": true, "limit": 1}'
    assert '"key":"pets"' in await _tool_result(client, auth, agent_id, search)
    assert vectors.nbytes > before
    await _put(client, auth, namespace=["users"], key="pets", value="a dog called Rex")
    await _put(client, auth, namespace=["users"], key="job", value="two cats at home, kept")
    assert '"key":"job"' in await _tool_result(client, auth, agent_id, search)
