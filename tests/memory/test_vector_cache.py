"""Search by meaning from a process's in-memory vectors (docs/decisions/0065): two apps on one
database stand for two API processes, each keeping its own vectors. A write, update, delete or
expiry made through one is seen by the other's next search; an account whose vectors do not
fit `memory_vector_cache_mb` is scanned instead, with the same answers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from atrium.app import create_app
from atrium.memory.vectors import vectors_of
from atrium.settings import Settings
from tests.conftest import bearer

ITEMS = "/v1/memory/items"
SEARCH = "/v1/memory/search"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"embeddings_model": "offline"}


@pytest.fixture
async def other(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A second app (its own vectors) on the test's database."""
    app = create_app(settings)
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://other") as http:
            http.app = app  # type: ignore[attr-defined]
            yield http


async def _put(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.put(ITEMS, json=body, headers=auth)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def _keys(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> list[str]:
    response = await client.post(SEARCH, json={"mode": "semantic", **body}, headers=auth)
    assert response.status_code == 200, response.text
    return [item["key"] for item in response.json()["data"]]


def _vectors(app: FastAPI) -> Any:
    return vectors_of(app.state.db, app.state.settings)


async def test_writes_of_one_app_are_found_by_the_other(
    client: httpx.AsyncClient, other: httpx.AsyncClient, auth: dict[str, str], app: FastAPI
) -> None:
    await _put(client, auth, namespace=["users", "alice"], key="pets", value="two cats Miso")
    # The other app loads the account's vectors on its first search, and keeps them.
    assert await _keys(other, auth, query="cats", limit=5) == ["pets"]
    assert _vectors(other.app).nbytes > 0  # type: ignore[attr-defined]

    await _put(client, auth, namespace=["users", "alice"], key="coffee", value="espresso no sugar")
    await _put(client, auth, namespace=["users", "bob"], key="coffee", value="espresso sugar")
    assert await _keys(other, auth, query="espresso no sugar", limit=1) == ["coffee"]
    assert await _keys(
        other, auth, query="espresso", namespace_prefix=["users", "bob"], limit=5
    ) == ["coffee"]
    assert len(await _keys(other, auth, query="espresso", limit=5)) == 3

    # An update replaces the vector: the item is now found by its new text, not its old one.
    await _put(client, auth, namespace=["users", "alice"], key="pets", value="a dog called Rex")
    assert (await _keys(other, auth, query="dog Rex", limit=1)) == ["pets"]
    found = await other.post(
        SEARCH, json={"mode": "semantic", "query": "dog Rex", "limit": 1}, headers=auth
    )
    assert found.json()["data"][0]["value"] == "a dog called Rex"

    # A delete: gone from the other app's answers.
    coffee = await client.get(
        f"{ITEMS}/by-key", params={"namespace": "users/bob", "key": "coffee"}, headers=auth
    )
    deleted = await client.delete(f"{ITEMS}/{coffee.json()['item_id']}", headers=auth)
    assert deleted.status_code == 200, deleted.text
    assert await _keys(other, auth, query="espresso", namespace_prefix=["users", "bob"]) == []
    assert len(await _keys(other, auth, query="espresso", limit=5)) == 2

    # A write made through the other app is found by the first one, which also keeps vectors.
    await _put(other, auth, namespace=["notes"], key="train", value="the train leaves at nine")
    assert (await _keys(client, auth, query="train leaves", limit=1)) == ["train"]

    # Expiry: found until it passes, then not, though no write removed the row.
    await _put(client, auth, namespace=["short"], key="k", value="fleeting thought", ttl_seconds=1)
    assert await _keys(other, auth, query="fleeting thought", namespace_prefix=["short"]) == ["k"]
    await asyncio.sleep(1.2)
    assert await _keys(other, auth, query="fleeting thought", namespace_prefix=["short"]) == []


async def test_another_account_sees_nothing_from_memory(
    client: httpx.AsyncClient, other: httpx.AsyncClient, auth: dict[str, str], make_key: Any
) -> None:
    await _put(client, auth, namespace=["users"], key="secret", value="the vault code is 1234")
    assert await _keys(other, auth, query="vault code") == ["secret"]
    someone = bearer((await make_key()).key)
    assert await _keys(other, someone, query="vault code") == []
    await _put(other, someone, namespace=["users"], key="mine", value="the vault code is 9")
    assert await _keys(client, auth, query="vault code") == ["secret"]
    assert await _keys(client, someone, query="vault code") == ["mine"]


@pytest.mark.fresh_app
@pytest.mark.parametrize(
    "settings_overrides",
    [{"embeddings_model": "offline", "memory_vector_cache_mb": 0.05}],
)
async def test_an_account_over_the_budget_is_scanned(
    client: httpx.AsyncClient, auth: dict[str, str], app: FastAPI, make_key: Any
) -> None:
    # ~1,556 bytes a vector with its seq, namespace and expiry: 60 do not fit 0.05 MB.
    for start in range(0, 60, 10):
        await asyncio.gather(
            *(
                _put(client, auth, namespace=["bulk"], key=f"k{index}", value=f"filler {index}")
                for index in range(start, start + 10)
            )
        )
    await _put(client, auth, namespace=["facts"], key="pets", value="two cats Miso and Tofu")
    assert await _keys(client, auth, query="cats Miso Tofu", limit=1) == ["pets"]
    assert await _keys(client, auth, query="filler 23", limit=1, namespace_prefix=["bulk"]) == [
        "k23"
    ]
    assert _vectors(app).nbytes == 0

    # Another account's few vectors fit: kept, beside the scanned one.
    someone = bearer((await make_key()).key)
    await _put(client, someone, namespace=["facts"], key="dog", value="a dog called Rex")
    assert await _keys(client, someone, query="dog Rex", limit=1) == ["dog"]
    assert _vectors(app).nbytes > 0
    assert await _keys(client, auth, query="cats Miso Tofu", limit=1) == ["pets"]


@pytest.mark.fresh_app
@pytest.mark.parametrize(
    "settings_overrides", [{"embeddings_model": "offline", "memory_vector_cache_mb": 0}]
)
async def test_no_budget_always_scans(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    await _put(client, auth, namespace=["a"], key="pets", value="two cats Miso and Tofu")
    await _put(client, auth, namespace=["b"], key="coffee", value="espresso without sugar")
    await _put(client, auth, namespace=["b"], key="gone", value="ttl cats", ttl_seconds=1)
    assert set(await _keys(client, auth, query="cats", limit=2)) == {"gone", "pets"}
    assert await _keys(client, auth, query="cats", namespace_prefix=["b"]) == ["gone", "coffee"]
    await asyncio.sleep(1.2)
    assert await _keys(client, auth, query="cats", namespace_prefix=["b"]) == ["coffee"]
    assert await _keys(client, auth, query="espresso", limit=1) == ["coffee"]
