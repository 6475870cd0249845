"""Spaces over HTTP: phpShort's bodies, name and color rules, lists, account isolation."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atrium.auth.service import IssuedKey
from atrium.db.engine import Database
from atrium.spaces import service
from tests.conftest import KeyFactory, bearer
from tests.domains.test_endpoints import assert_invalid

SPACES = "/api/v1/spaces"
SPACE_FIELDS = {"id", "name", "color", "created_at", "updated_at"}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


async def make_spaces(db: Database, account_id: int, names: list[str]) -> list[int]:
    async with db.transaction() as session:
        ids = []
        for name in names:
            space = await service.create_space(
                session, account_id=account_id, fields={"name": name}
            )
            ids.append(space.id)
        return ids


async def test_store_defaults_color_to_1(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post(SPACES, data={"name": "  Work  "}, headers=auth)
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"data", "status"} and body["status"] == 200  # phpShort's, on a 201
    assert set(body["data"]) == SPACE_FIELDS
    assert body["data"]["name"] == "Work"
    assert body["data"]["color"] == 1
    assert TIMESTAMP.match(body["data"]["created_at"])


@pytest.mark.parametrize(("sent", "stored"), [("1", 1), ("6", 6), ("3", 3), (" 4 ", 4), ("", 1)])
async def test_color_from_a_form_is_an_integer(
    client: httpx.AsyncClient, auth: dict[str, str], sent: str, stored: int
) -> None:
    response = await client.post(SPACES, data={"name": "c", "color": sent}, headers=auth)
    assert response.status_code == 201
    assert response.json()["data"]["color"] == stored


@pytest.mark.parametrize("sent", [2, "5"])
async def test_color_from_json(client: httpx.AsyncClient, auth: dict[str, str], sent: Any) -> None:
    response = await client.post(SPACES, json={"name": "j", "color": sent}, headers=auth)
    assert response.status_code == 201
    assert response.json()["data"]["color"] == int(sent)


@pytest.mark.parametrize("color", ["0", "7", "-1", "one", "1.5", "2.0", "1e0", "999999"])
async def test_invalid_form_color_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], color: str
) -> None:
    assert_invalid(
        await client.post(SPACES, data={"name": "x", "color": color}, headers=auth), "color"
    )


@pytest.mark.parametrize("color", [0, 7, 2.0, 1.5, True, [1], {"c": 1}])
async def test_invalid_json_color_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], color: Any
) -> None:
    response = await client.post(SPACES, json={"name": "x", "color": color}, headers=auth)
    assert_invalid(response, "color")


@pytest.mark.parametrize("name", ["", "   ", "x" * 33, "a\x00b", "line\nbreak"])
async def test_invalid_name_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], name: str
) -> None:
    assert_invalid(await client.post(SPACES, data={"name": name}, headers=auth), "name")
    assert (await client.get(SPACES, headers=auth)).json()["meta"]["total"] == 0


async def test_name_limits_and_uniqueness_per_account(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    assert (await client.post(SPACES, data={"name": "é" * 32}, headers=auth)).status_code == 201
    assert (await client.post(SPACES, data={"name": "Team"}, headers=auth)).status_code == 201
    assert_invalid(await client.post(SPACES, data={"name": "Team"}, headers=auth), "name")
    assert_invalid(await client.post(SPACES, json={"name": 12}, headers=auth), "name")
    assert_invalid(await client.post(SPACES, headers=auth), "name")
    other = await make_key()
    response = await client.post(SPACES, data={"name": "Team"}, headers=bearer(other.key))
    assert response.status_code == 201


async def test_show_update_delete(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    created = (await client.post(SPACES, data={"name": "A", "color": "2"}, headers=auth)).json()
    url = f"{SPACES}/{created['data']['id']}"
    assert (await client.get(url, headers=auth)).json() == {"data": created["data"], "status": 200}

    renamed = await client.put(url, data={"name": "B"}, headers=auth)
    assert renamed.status_code == 200
    assert (renamed.json()["data"]["name"], renamed.json()["data"]["color"]) == ("B", 2)
    recolored = await client.patch(url, data={"color": "6"}, headers=auth)
    assert (recolored.json()["data"]["name"], recolored.json()["data"]["color"]) == ("B", 6)
    same = await client.patch(url, data={"name": "B"}, headers=auth)  # its own name is no clash
    assert same.status_code == 200

    deleted = await client.delete(url, headers=auth)
    assert deleted.json() == {
        "id": created["data"]["id"],
        "object": "space",
        "deleted": True,
        "status": 200,
    }
    assert (await client.get(url, headers=auth)).status_code == 404


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_update_validates_everything_before_writing(
    client: httpx.AsyncClient, auth: dict[str, str], method: str
) -> None:
    await client.post(SPACES, data={"name": "Taken"}, headers=auth)
    created = (await client.post(SPACES, data={"name": "Mine", "color": "3"}, headers=auth)).json()
    url = f"{SPACES}/{created['data']['id']}"
    bad_color = await client.request(method, url, data={"name": "New", "color": "9"}, headers=auth)
    assert_invalid(bad_color, "color")
    assert_invalid(await client.request(method, url, data={"name": ""}, headers=auth), "name")
    assert_invalid(await client.request(method, url, data={"name": "Taken"}, headers=auth), "name")
    assert (await client.get(url, headers=auth)).json()["data"] == created["data"]


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
async def test_foreign_and_unknown_ids_are_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory, method: str
) -> None:
    other = await make_key()
    theirs = (await client.post(SPACES, data={"name": "T"}, headers=bearer(other.key))).json()
    for space_id in (theirs["data"]["id"], 999_999, 99_999_999_999):
        response = await client.request(method, f"{SPACES}/{space_id}", headers=auth)
        assert response.status_code == 404
        assert response.json()["error"]["details"] == {"parameter": "id"}
    assert_invalid(await client.request(method, f"{SPACES}/x", headers=auth), "id")
    shown = await client.get(f"{SPACES}/{theirs['data']['id']}", headers=bearer(other.key))
    assert shown.json()["data"] == theirs["data"]


async def test_list_search_sort_and_links(
    client: httpx.AsyncClient, api_key: IssuedKey, db: Database
) -> None:
    await make_spaces(db, api_key.account_id, ["Work", "Home", "Homework", "Play"])
    auth = bearer(api_key.key)
    body = (await client.get(SPACES, params={"search": "WORK"}, headers=auth)).json()
    assert [s["name"] for s in body["data"]] == ["Homework", "Work"]
    assert body["meta"]["total"] == 2
    assert body["links"]["first"].endswith(
        "/api/v1/spaces?search=WORK&search_by=name&sort_by=id&sort=desc&per_page=50&page=1"
    )
    by_name = await client.get(SPACES, params={"sort_by": "name", "sort": "asc"}, headers=auth)
    assert [s["name"] for s in by_name.json()["data"]] == ["Home", "Homework", "Play", "Work"]
    wildcard = await client.get(SPACES, params={"search": "%"}, headers=auth)
    assert wildcard.json()["data"] == []
    rejected = [
        ("per_page", "5"),
        ("sort", "x"),
        ("sort_by", "color"),
        ("search_by", "color"),
        ("page", "0"),
        ("search", "nul\x00"),
    ]
    for parameter, value in rejected:
        assert_invalid(await client.get(SPACES, params={parameter: value}, headers=auth), parameter)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    names=st.lists(st.text(alphabet="aAbB é-", min_size=1, max_size=5), max_size=25, unique=True),
    sort_by=st.sampled_from(["id", "name"]),
    sort=st.sampled_from(["asc", "desc"]),
)
async def test_pagination_returns_every_space_once_in_order(
    client: httpx.AsyncClient,
    make_key: KeyFactory,
    db: Database,
    names: list[str],
    sort_by: str,
    sort: str,
) -> None:
    names = list(dict.fromkeys(name.strip() for name in names if name.strip()))
    key = await make_key()
    ids = await make_spaces(db, key.account_id, names)
    rows = list(zip(ids, names, strict=True))
    if sort_by == "name":
        rows.sort(key=lambda row: (row[1], row[0]), reverse=sort == "desc")
    else:
        rows.sort(key=lambda row: row[0], reverse=sort == "desc")
    seen: list[tuple[int, str]] = []
    for page in range(1, max(1, -(-len(rows) // 10)) + 2):  # one page past the end too
        params = {"sort_by": sort_by, "sort": sort, "per_page": "10", "page": str(page)}
        body = (await client.get(SPACES, params=params, headers=bearer(key.key))).json()
        assert body["meta"]["total"] == len(rows)
        seen += [(s["id"], s["name"]) for s in body["data"]]
    assert seen == rows
