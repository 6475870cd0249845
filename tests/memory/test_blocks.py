"""`/v1/memory/blocks`: create, list, get, update, delete, history; limits; accounts kept
apart; every 400 names its parameter and writes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import KeyFactory, bearer

BLOCKS = "/v1/memory/blocks"


async def _create(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(BLOCKS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    block: dict[str, Any] = response.json()
    return block


async def test_create_get_update_delete_history(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    made = await _create(client, auth, label="persona", value="I am terse.")
    assert made["block_id"].startswith("blk_")
    assert (made["label"], made["version"], made["limit"], made["chars"]) == (
        "persona",
        1,
        2000,
        11,
    )
    assert (await client.get(f"{BLOCKS}/persona", headers=auth)).json() == made

    changed = await client.patch(
        f"{BLOCKS}/persona", json={"value": "I am kind.", "limit": 50}, headers=auth
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["version"] == 2 and changed.json()["limit"] == 50
    widened = await client.patch(f"{BLOCKS}/persona", json={"limit": 60}, headers=auth)
    assert widened.json()["value"] == "I am kind." and widened.json()["version"] == 3
    stale = await client.patch(
        f"{BLOCKS}/persona", json={"value": "late", "if_version": 2}, headers=auth
    )
    assert stale.status_code == 409 and stale.json()["error"]["details"]["version"] == 3
    listed = (await client.get(BLOCKS, headers=auth)).json()
    assert [block["label"] for block in listed["data"]] == ["persona"]
    assert listed["has_more"] is False

    taken = await client.post(BLOCKS, json={"label": "persona"}, headers=auth)
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "CONFLICT"

    deleted = await client.delete(f"{BLOCKS}/persona", headers=auth)
    assert deleted.json() == {"block_id": made["block_id"], "label": "persona", "deleted": True}
    for method in ("GET", "DELETE"):
        gone = await client.request(method, f"{BLOCKS}/persona", headers=auth)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"
    assert (
        await client.patch(f"{BLOCKS}/persona", json={"value": "x"}, headers=auth)
    ).status_code == 404

    # A new block under the label starts again at version 1; the history holds both.
    again = await _create(client, auth, label="persona", value="new")
    assert again["block_id"] != made["block_id"] and again["version"] == 1
    history = (await client.get(f"{BLOCKS}/persona/history", headers=auth)).json()
    assert [(entry["action"], entry["version"]) for entry in history["data"]] == [
        ("created", 1),
        ("deleted", 4),
        ("updated", 3),
        ("updated", 2),
        ("created", 1),
    ]
    assert [entry["value"] for entry in history["data"]][1:] == [
        "I am kind.",
        "I am kind.",
        "I am kind.",
        "I am terse.",
    ]
    assert all(isinstance(entry["api_key_id"], int) for entry in history["data"])
    assert all(entry["run_id"] is None for entry in history["data"])

    page = (await client.get(f"{BLOCKS}/persona/history?limit=2", headers=auth)).json()
    assert page["has_more"] is True and len(page["data"]) == 2
    rest = await client.get(
        f"{BLOCKS}/persona/history", params={"cursor": page["next_cursor"]}, headers=auth
    )
    assert [entry["version"] for entry in rest.json()["data"]] == [3, 2, 1]
    assert (await client.get(f"{BLOCKS}/never/history", headers=auth)).status_code == 404


async def test_list_pages(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    for index in range(5):
        await _create(client, auth, label=f"b{index}")
    seen: list[str] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(BLOCKS, params=params, headers=auth)).json()
        seen += [block["label"] for block in page["data"]]
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == ["b4", "b3", "b2", "b1", "b0"]


@pytest.mark.parametrize("settings_overrides", [{"memory_block_max_chars": 500}])
async def test_limits(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    await _create(client, auth, label="user", value="x" * 10, limit=20)
    cases = [
        ({"value": "y" * 21}, "value"),
        ({"limit": 9}, "limit"),
        ({"value": "y" * 30, "limit": 25}, "value"),
        ({"limit": 501}, "limit"),
    ]
    for body, parameter in cases:
        response = await client.patch(f"{BLOCKS}/user", json=body, headers=auth)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["error"]["details"]["parameter"] == parameter
    kept = (await client.get(f"{BLOCKS}/user", headers=auth)).json()
    assert (kept["value"], kept["limit"], kept["version"]) == ("x" * 10, 20, 1)
    at_most = await client.post(BLOCKS, json={"label": "big", "limit": 500}, headers=auth)
    assert at_most.status_code == 201
    full = await client.patch(f"{BLOCKS}/big", json={"value": "z" * 500}, headers=auth)
    assert full.status_code == 200 and full.json()["chars"] == 500


@pytest.mark.parametrize("settings_overrides", [{"memory_block_max_per_account": 2}])
async def test_blocks_per_account(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    await _create(client, auth, label="a")
    await _create(client, auth, label="b")
    third = await client.post(BLOCKS, json={"label": "c"}, headers=auth)
    assert third.status_code == 400 and third.json()["error"]["details"]["parameter"] == "label"


async def test_another_account_sees_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    mine = await _create(client, auth, label="secret", value="mine only")
    other = bearer((await make_key()).key)
    for path in (f"{BLOCKS}/secret", f"{BLOCKS}/secret/history"):
        assert (await client.get(path, headers=other)).status_code == 404
    assert (await client.delete(f"{BLOCKS}/secret", headers=other)).status_code == 404
    patched = await client.patch(f"{BLOCKS}/secret", json={"value": "x"}, headers=other)
    assert patched.status_code == 404
    assert (await client.get(BLOCKS, headers=other)).json()["data"] == []
    # The same label in the other account is its own block.
    theirs = await _create(client, other, label="secret", value="theirs")
    assert theirs["block_id"] != mine["block_id"]
    assert (await client.get(f"{BLOCKS}/secret", headers=auth)).json()["value"] == "mine only"


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({}, "label"),
        ({"label": ""}, "label"),
        ({"label": "a b"}, "label"),
        ({"label": "x" * 65}, "label"),
        ({"label": "a", "value": 5}, "value"),
        ({"label": "a", "value": "nul\x00"}, "value"),
        ({"label": "a", "value": "x" * 2001}, "value"),
        ({"label": "a", "limit": 0}, "limit"),
        ({"label": "a", "limit": "5"}, "limit"),
        ({"label": "a", "limit": 5.5}, "limit"),
        ({"label": "a", "limit": 20_001}, "limit"),
        ({"label": "a", "value": "x" * 11, "limit": 10}, "value"),
        ({"label": "a", "colour": "red"}, "colour"),
    ],
)
async def test_bad_creates_name_their_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any], parameter: str
) -> None:
    response = await client.post(BLOCKS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"].split(".")[0] == parameter
    assert (await client.get(BLOCKS, headers=auth)).json()["data"] == []


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "parameter"),
    [
        ("PATCH", f"{BLOCKS}/kept", {"json": {}}, "value"),
        ("PATCH", f"{BLOCKS}/kept", {"json": {"value": None, "limit": None}}, "value"),
        ("PATCH", f"{BLOCKS}/kept", {"json": {"value": "x", "if_version": 0}}, "if_version"),
        ("PATCH", f"{BLOCKS}/kept", {"json": {"label": "renamed"}}, "label"),
        ("PATCH", f"{BLOCKS}/a%20b", {"json": {"value": "x"}}, "label"),
        ("GET", f"{BLOCKS}/{'x' * 65}", {}, "label"),
        ("DELETE", f"{BLOCKS}/a%20b", {}, "label"),
        ("GET", BLOCKS, {"params": {"limit": 1000}}, "limit"),
        ("GET", BLOCKS, {"params": {"cursor": "nonsense"}}, "cursor"),
        ("GET", f"{BLOCKS}/kept/history", {"params": {"limit": 0}}, "limit"),
    ],
)
async def test_bad_requests_name_their_parameter(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    method: str,
    path: str,
    kwargs: dict[str, Any],
    parameter: str,
) -> None:
    kept = await _create(client, auth, label="kept", value="as it was")
    response = await client.request(method, path, headers=auth, **kwargs)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["parameter"].split(".")[0] == parameter
    assert (await client.get(f"{BLOCKS}/kept", headers=auth)).json() == kept
