"""Search by meaning through a remote embeddings model (`openai-compatible:<model>`): the
project's fake OpenAI-compatible server on loopback answers `/embeddings`. Items put through
the API and written by an agent's tool are found by meaning; a failing embeddings server is a
502 naming the model (nothing written) for the API and a failed tool call for an agent; the
app's shutdown closes the embedder's connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager

from atrium.app import create_app
from atrium.auth.service import create_key
from atrium.settings import Settings
from tests.conftest import bearer
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ChatServer

ITEMS = "/v1/memory/items"
SEARCH = "/v1/memory/search"
MODEL = "openai-compatible:fake-embedder"


@pytest.fixture
async def embeddings_server() -> AsyncIterator[ChatServer]:
    async with ChatServer() as server:
        yield server


@pytest.fixture
def settings_overrides(embeddings_server: ChatServer) -> dict[str, object]:
    return {"embeddings_model": MODEL, "llm_base_url": embeddings_server.base_url}


async def _put(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> httpx.Response:
    return await client.put(ITEMS, json=body, headers=auth)


async def _semantic(client: httpx.AsyncClient, auth: dict[str, str], query: str) -> httpx.Response:
    return await client.post(SEARCH, json={"mode": "semantic", "query": query}, headers=auth)


async def _memory_agent(client: httpx.AsyncClient, auth: dict[str, str]) -> str:
    memory = {"read": [["users"]], "write": [["users"]]}
    body = {"name": "m", "config": {"tools": [], "memory": memory}}
    response = await client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def test_put_and_search_by_meaning_through_the_server(
    client: httpx.AsyncClient, auth: dict[str, str], embeddings_server: ChatServer
) -> None:
    facts = {
        "pets": "Alice has two cats at home",
        "coffee": "Alice drinks espresso every morning",
        "job": "Alice administers databases in Lisbon",
    }
    for key, text in facts.items():
        response = await _put(client, auth, namespace=["users"], key=key, value=1, text=text)
        assert response.status_code == 200, response.text
    sent = embeddings_server.embedding_requests
    assert [request["model"] for request in sent] == ["fake-embedder"] * 3
    assert sent[0]["input"] == ["Alice has two cats at home"]

    found = await _semantic(client, auth, "cats at home")
    assert found.status_code == 200, found.text
    assert found.json()["data"][0]["key"] == "pets"
    assert sent[-1]["input"] == ["cats at home"]

    # An agent's memory_write embeds through the same server (the worker's process embedder).
    agent_id = await _memory_agent(client, auth)
    write = 'call memory_write {"namespace": ["users"], "key": "tea", "value": "green tea daily"}'
    run = await create_run(client, auth, write, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert "Remembered 'tea'" in done["result"], done
    assert sent[-1]["input"] == ["green tea daily"]
    assert (await _semantic(client, auth, "green tea")).json()["data"][0]["key"] == "tea"


@pytest.mark.parametrize("status", [400, 503])
async def test_a_failing_embeddings_server_is_a_clear_error_and_writes_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], embeddings_server: ChatServer, status: int
) -> None:
    embeddings_server.embeddings_status = status
    response = await _put(client, auth, namespace=["users"], key="pets", value="two cats")
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert error["code"] == "EMBEDDINGS_UNAVAILABLE"
    assert MODEL in error["message"] and f"HTTP {status}" in error["message"]
    assert error["details"] == {"model": MODEL}
    assert embeddings_server.base_url not in error["message"]
    listed = await client.get(ITEMS, headers=auth)
    assert listed.json()["data"] == []

    search = await _semantic(client, auth, "cats")
    assert search.status_code == 502
    assert search.json()["error"]["code"] == "EMBEDDINGS_UNAVAILABLE"
    # Search by text needs no embedder: still answered.
    text = await client.post(SEARCH, json={"query": "cats"}, headers=auth)
    assert text.status_code == 200 and text.json()["data"] == []

    # An agent's write is a failed tool call the model reads; the run completes, nothing written.
    agent_id = await _memory_agent(client, auth)
    write = 'call memory_write {"namespace": ["users"], "key": "pets", "value": "two cats"}'
    run = await create_run(client, auth, write, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert "memory_write failed: the embeddings model" in done["result"], done
    assert (await client.get(ITEMS, headers=auth)).json()["data"] == []

    embeddings_server.embeddings_status = None
    again = await _put(client, auth, namespace=["users"], key="pets", value="two cats")
    assert again.status_code == 200, again.text


async def test_shutdown_closes_the_embedders_connections(
    settings: Settings, embeddings_server: ChatServer
) -> None:
    app = create_app(settings)
    async with LifespanManager(app):
        async with app.state.db.transaction() as session:
            key = (await create_key(session, account_name="shutdown")).key
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            response = await _put(
                client, bearer(key), namespace=["users"], key="pets", value="two cats"
            )
            assert response.status_code == 200, response.text
        assert embeddings_server.connections >= 1
    for _ in range(50):
        if embeddings_server.connections == 0:
            break
        await asyncio.sleep(0.05)
    assert embeddings_server.connections == 0
