"""`/v1/memory`: put (upsert), get by id and key, list by prefix, search, TTL, accounts
kept apart, the history of writes; every 400 names its parameter."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.conftest import KeyFactory, bearer

ITEMS = "/v1/memory/items"
SEARCH = "/v1/memory/search"


async def _put(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.put(ITEMS, json=body, headers=auth)
    assert response.status_code == 200, response.text
    item: dict[str, Any] = response.json()
    return item


async def test_put_get_replace_delete(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    first = await _put(
        client, auth, namespace=["users", "alice"], key="coffee", value={"likes": "espresso"}
    )
    assert first["item_id"].startswith("mem_")
    assert first["namespace"] == ["users", "alice"] and first["expires_at"] is None
    again = await _put(client, auth, namespace=["users", "alice"], key="coffee", value=2)
    assert again["item_id"] == first["item_id"] and again["value"] == 2

    one = await client.get(f"{ITEMS}/{first['item_id']}", headers=auth)
    assert one.status_code == 200 and one.json() == again
    by_key = await client.get(
        f"{ITEMS}/by-key", params={"namespace": "users/alice", "key": "coffee"}, headers=auth
    )
    assert by_key.status_code == 200 and by_key.json()["item_id"] == first["item_id"]

    deleted = await client.delete(f"{ITEMS}/{first['item_id']}", headers=auth)
    assert deleted.json() == {"item_id": first["item_id"], "deleted": True}
    for method in ("GET", "DELETE"):
        gone = await client.request(method, f"{ITEMS}/{first['item_id']}", headers=auth)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"

    history = (await client.get(f"{ITEMS}/{first['item_id']}/history", headers=auth)).json()
    assert [entry["action"] for entry in history["data"]] == ["deleted", "written", "written"]
    assert [entry["value"] for entry in history["data"]] == [None, 2, {"likes": "espresso"}]
    assert all(isinstance(entry["api_key_id"], int) for entry in history["data"])
    assert all(entry["run_id"] is None for entry in history["data"])


async def test_list_by_namespace_prefix_pages(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for index in range(5):
        await _put(client, auth, namespace=["users", "alice"], key=f"k{index}", value=index)
    await _put(client, auth, namespace=["users", "alicia"], key="k", value="not alice")
    await _put(client, auth, namespace=["teams"], key="k", value="team")

    seen: list[Any] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"namespace_prefix": "users/alice", "limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = (await client.get(ITEMS, params=params, headers=auth)).json()
        seen += [item["value"] for item in page["data"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == [4, 3, 2, 1, 0]
    users = (await client.get(ITEMS, params={"namespace_prefix": "users"}, headers=auth)).json()
    assert len(users["data"]) == 6
    everything = (await client.get(ITEMS, headers=auth)).json()
    assert len(everything["data"]) == 7


async def test_text_search(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    await _put(
        client,
        auth,
        namespace=["users", "alice"],
        key="coffee",
        value={"drink": "espresso", "size": "double"},
    )
    await _put(
        client,
        auth,
        namespace=["users", "bob"],
        key="coffee",
        value={"drink": "latte"},
        text="Bob drinks a latte with oat milk every morning",
    )
    await _put(client, auth, namespace=["users", "bob"], key="tea", value={"drink": "green tea"})

    async def found(**body: Any) -> list[str]:
        response = await client.post(SEARCH, json=body, headers=auth)
        assert response.status_code == 200, response.text
        return [f"{'/'.join(item['namespace'])}:{item['key']}" for item in response.json()["data"]]

    assert await found(query="espresso") == ["users/alice:coffee"]
    assert await found(query="OAT milk") == ["users/bob:coffee"]
    assert await found(query="oat espresso") == []
    assert await found(query="drinks", namespace_prefix=["users", "alice"]) == []
    assert sorted(await found(query="tea latte milk green")) == []
    assert await found(query="green", namespace_prefix=["users"]) == ["users/bob:tea"]
    assert await found(query="espresso", filter={"size": "double"}) == ["users/alice:coffee"]
    assert await found(query="espresso", filter={"size": "single"}) == []
    # Query syntax of neither database is read: quotes, stars and brackets are no words, and
    # OR is a word to find like any other.
    assert await found(query='espresso" * (') == ["users/alice:coffee"]
    assert await found(query="espresso OR latte") == []
    # A query of symbols only holds no word: it finds nothing (a query is any non-empty text).
    assert await found(query="?! *") == []


async def test_ttl_is_honoured_and_purged(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    brief = await _put(
        client, auth, namespace=["scratch"], key="otp", value="123456", ttl_seconds=1
    )
    assert brief["expires_at"] is not None
    await _put(client, auth, namespace=["scratch"], key="kept", value="stays")
    await asyncio.sleep(1.2)
    assert (await client.get(f"{ITEMS}/{brief['item_id']}", headers=auth)).status_code == 404
    by_key = await client.get(
        f"{ITEMS}/by-key", params={"namespace": "scratch", "key": "otp"}, headers=auth
    )
    assert by_key.status_code == 404
    listed = (await client.get(ITEMS, params={"namespace_prefix": "scratch"}, headers=auth)).json()
    assert [item["key"] for item in listed["data"]] == ["kept"]
    assert (await client.post(SEARCH, json={"query": "123456"}, headers=auth)).json()["data"] == []
    # A write under the expired key makes a fresh value live again (same row, same id).
    again = await _put(client, auth, namespace=["scratch"], key="otp", value="654321")
    assert again["expires_at"] is None
    fetched = await client.get(f"{ITEMS}/{again['item_id']}", headers=auth)
    assert fetched.json()["value"] == "654321"


async def test_another_account_sees_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    mine = await _put(client, auth, namespace=["secrets"], key="k", value="mine only")
    other = bearer((await make_key()).key)
    for path in (f"{ITEMS}/{mine['item_id']}", f"{ITEMS}/{mine['item_id']}/history"):
        assert (await client.get(path, headers=other)).status_code == 404
    assert (await client.delete(f"{ITEMS}/{mine['item_id']}", headers=other)).status_code == 404
    by_key = await client.get(
        f"{ITEMS}/by-key", params={"namespace": "secrets", "key": "k"}, headers=other
    )
    assert by_key.status_code == 404
    assert (await client.get(ITEMS, headers=other)).json()["data"] == []
    found = await client.post(SEARCH, json={"query": "mine"}, headers=other)
    assert found.json()["data"] == []
    # The same key in the other account is its own item.
    theirs = await _put(client, other, namespace=["secrets"], key="k", value="theirs")
    assert theirs["item_id"] != mine["item_id"]
    assert (await client.get(f"{ITEMS}/{mine['item_id']}", headers=auth)).json()["value"] == (
        "mine only"
    )


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"key": "k", "value": 1}, "namespace"),
        ({"namespace": [], "key": "k", "value": 1}, "namespace"),
        ({"namespace": ["a/b"], "key": "k", "value": 1}, "namespace"),
        ({"namespace": ["a"] * 9, "key": "k", "value": 1}, "namespace"),
        ({"namespace": ["a"], "key": "", "value": 1}, "key"),
        ({"namespace": ["a"], "value": 1}, "key"),
        ({"namespace": ["a"], "key": "k"}, "value"),
        ({"namespace": ["a"], "key": "k", "value": "x" * 70_000}, "value"),
        ({"namespace": ["a"], "key": "k", "value": 1, "ttl_seconds": 0}, "ttl_seconds"),
        ({"namespace": ["a"], "key": "k", "value": 1, "ttl_seconds": "5"}, "ttl_seconds"),
        ({"namespace": ["a"], "key": "k", "value": 1, "ttl_seconds": 5.5}, "ttl_seconds"),
        ({"namespace": ["a"], "key": "k", "value": 1, "colour": "red"}, "colour"),
    ],
)
async def test_bad_puts_name_their_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any], parameter: str
) -> None:
    response = await client.put(ITEMS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"].split(".")[0] == parameter
    assert (await client.get(ITEMS, headers=auth)).json()["data"] == []


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "parameter"),
    [
        ("POST", SEARCH, {"json": {"query": "a", "limit": 0}}, "limit"),
        ("POST", SEARCH, {"json": {"query": "a", "namespace_prefix": ["x y"]}}, "namespace_prefix"),
        ("GET", ITEMS, {"params": {"namespace_prefix": "a b"}}, "namespace_prefix"),
        ("GET", ITEMS, {"params": {"cursor": "nonsense"}}, "cursor"),
        ("GET", ITEMS, {"params": {"limit": 1000}}, "limit"),
        ("GET", f"{ITEMS}/by-key", {"params": {"namespace": "", "key": "k"}}, "namespace"),
    ],
)
async def test_bad_reads_name_their_parameter(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    parameter: str,
) -> None:
    response = await client.request(method, path, headers=auth, **kwargs)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"].split(".")[0] == parameter


async def test_racing_first_writes_of_a_key_make_one_item(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    written = await asyncio.gather(
        *(_put(client, auth, namespace=["race"], key="same", value=index) for index in range(8))
    )
    assert len({item["item_id"] for item in written}) == 1
    listed = (await client.get(ITEMS, params={"namespace_prefix": "race"}, headers=auth)).json()
    assert len(listed["data"]) == 1 and listed["data"][0]["value"] in range(8)
    history = await client.get(f"{ITEMS}/{written[0]['item_id']}/history", headers=auth)
    assert len(history.json()["data"]) == 8
