"""The domains list: parameters, Laravel paginator shape and links, search, ordering."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.conftest import bearer
from tests.domains.conftest import PUBLIC_URL, DomainFactory
from tests.domains.test_endpoints import assert_invalid

LIST = "/api/v1/domains"
PATH = PUBLIC_URL + LIST


def query_of(url: str) -> list[tuple[str, str]]:
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == PATH
    return parse_qsl(parts.query, keep_blank_values=True)


async def test_defaults_and_shape(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    ids = await make_domains(api_key.account_id, [f"d{i}.com" for i in range(3)])
    response = await client.get(LIST, headers=bearer(api_key.key))
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "links", "meta", "status"}
    assert body["status"] == 200
    assert [d["id"] for d in body["data"]] == ids[::-1]  # sort_by id, desc
    query = "search_by=name&sort_by=id&sort=desc&per_page=50"
    assert body["links"] == {
        "first": f"{PATH}?{query}&page=1",
        "last": f"{PATH}?{query}&page=1",
        "prev": None,
        "next": None,
    }
    assert body["meta"] == {
        "current_page": 1,
        "from": 1,
        "last_page": 1,
        "links": [
            {"url": None, "label": "&laquo; Previous", "active": False},
            {"url": f"{PATH}?{query}&page=1", "label": "1", "active": True},
            {"url": None, "label": "Next &raquo;", "active": False},
        ],
        "path": PATH,
        "per_page": 50,
        "to": 3,
        "total": 3,
    }


async def test_empty_list(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    body = (await client.get(LIST, headers=auth)).json()
    assert body["data"] == []
    meta = body["meta"]
    assert (meta["from"], meta["to"], meta["total"], meta["last_page"]) == (None, None, 0, 1)
    assert body["links"]["next"] is None and body["links"]["prev"] is None


async def test_pages_and_links_repeat_the_effective_query(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    await make_domains(api_key.account_id, [f"page-{i:02d}.com" for i in range(25)])
    await make_domains(api_key.account_id, ["other.org"])
    params = {"search": " PAGE ", "sort_by": "name", "sort": "asc", "per_page": "10", "page": "2"}
    body = (await client.get(LIST, params=params, headers=bearer(api_key.key))).json()
    assert [d["name"] for d in body["data"]] == [f"page-{i:02d}.com" for i in range(10, 20)]
    meta = body["meta"]
    assert (meta["current_page"], meta["from"], meta["to"], meta["total"]) == (2, 11, 20, 25)
    assert meta["last_page"] == 3
    expected = [
        ("search", "PAGE"),  # trimmed, otherwise as sent
        ("search_by", "name"),
        ("sort_by", "name"),
        ("sort", "asc"),
        ("per_page", "10"),
    ]
    assert query_of(body["links"]["next"]) == [*expected, ("page", "3")]
    assert query_of(body["links"]["prev"]) == [*expected, ("page", "1")]
    assert query_of(body["links"]["first"]) == [*expected, ("page", "1")]
    assert query_of(body["links"]["last"]) == [*expected, ("page", "3")]
    labels = [link["label"] for link in meta["links"]]
    assert labels == ["&laquo; Previous", "1", "2", "3", "Next &raquo;"]
    assert [link["active"] for link in meta["links"]] == [False, False, True, False, False]

    last = (
        await client.get(LIST, params={**params, "page": "3"}, headers=bearer(api_key.key))
    ).json()
    assert len(last["data"]) == 5
    assert (last["meta"]["from"], last["meta"]["to"]) == (21, 25)
    assert last["links"]["next"] is None


async def test_page_past_the_end_is_empty(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    await make_domains(api_key.account_id, ["a.com", "b.com"])
    body = (await client.get(LIST, params={"page": "7"}, headers=bearer(api_key.key))).json()
    assert body["data"] == []
    meta = body["meta"]
    assert (meta["current_page"], meta["from"], meta["to"], meta["total"]) == (7, None, None, 2)
    assert meta["last_page"] == 1
    assert body["links"]["next"] is None
    assert dict(query_of(body["links"]["prev"]))["page"] == "6"
    huge = await client.get(LIST, params={"page": "2147483647"}, headers=bearer(api_key.key))
    assert huge.status_code == 200 and huge.json()["data"] == []


async def test_allowed_search_by_and_long_search(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    await make_domains(api_key.account_id, ["findme.com"])
    params = {"search": "findme", "search_by": "name"}
    body = (await client.get(LIST, params=params, headers=bearer(api_key.key))).json()
    assert [d["name"] for d in body["data"]] == ["findme.com"]
    longest = await client.get(LIST, params={"search": "x" * 255}, headers=bearer(api_key.key))
    assert longest.status_code == 200 and longest.json()["meta"]["total"] == 0


@pytest.mark.parametrize("per_page", ["10", "25", "50", "100"])
async def test_allowed_per_page(
    client: httpx.AsyncClient, auth: dict[str, str], per_page: str
) -> None:
    body = (await client.get(LIST, params={"per_page": per_page}, headers=auth)).json()
    assert body["meta"]["per_page"] == int(per_page)


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("per_page", "20"),
        ("per_page", "0"),
        ("per_page", "-10"),
        ("per_page", "ten"),
        ("per_page", "10.0"),
        ("per_page", ""),
        ("per_page", "1000"),
        ("sort", "up"),
        ("sort", "DESC"),
        ("sort", ""),
        ("sort_by", "created_at"),
        ("sort_by", "url"),
        ("sort_by", ""),
        ("search_by", "url"),
        ("search_by", "id"),
        ("search_by", ""),
        ("page", "0"),
        ("page", "-1"),
        ("page", "one"),
        ("page", "1.5"),
        ("page", ""),
        ("page", "2147483648"),
        ("page", "9" * 40),
        ("search", "x" * 256),
        ("search", "a\x00b"),
        ("search", "a\tb"),
    ],
)
async def test_rejected_list_parameters(
    client: httpx.AsyncClient, auth: dict[str, str], parameter: str, value: str
) -> None:
    assert_invalid(await client.get(LIST, params={parameter: value}, headers=auth), parameter)


@pytest.mark.parametrize(
    ("params", "order"),
    [
        ({}, ["bravo.com", "alpha.com", "charlie.com"]),
        ({"sort": "asc"}, ["charlie.com", "alpha.com", "bravo.com"]),
        ({"sort_by": "name"}, ["charlie.com", "bravo.com", "alpha.com"]),
        ({"sort_by": "name", "sort": "asc"}, ["alpha.com", "bravo.com", "charlie.com"]),
        ({"sort_by": "id", "sort": "desc"}, ["bravo.com", "alpha.com", "charlie.com"]),
    ],
)
async def test_sorting(
    client: httpx.AsyncClient,
    api_key: IssuedKey,
    make_domains: DomainFactory,
    params: dict[str, str],
    order: list[str],
) -> None:
    await make_domains(api_key.account_id, ["charlie.com", "alpha.com", "bravo.com"])
    body = (await client.get(LIST, params=params, headers=bearer(api_key.key))).json()
    assert [d["name"] for d in body["data"]] == order


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("shop", {"myshop.com", "shop.example.org", "shopping.net"}),
        ("SHOP", {"myshop.com", "shop.example.org", "shopping.net"}),
        ("p.", {"myshop.com", "shop.example.org"}),  # shorter than a trigram
        (".com", {"myshop.com", "percent-100.com"}),
        ("%", set()),  # LIKE wildcards are literal characters
        ("_", set()),
        ("shop%", set()),
        ("-100", {"percent-100.com"}),
        ("bücher", {"xn--bcher-kva.example"}),  # a Unicode term matches the punycode name
        ("xn--bcher", {"xn--bcher-kva.example"}),
        ("nothing-like-this", set()),
        ("ü", set()),
        ('"', set()),
        (
            "   ",
            {
                "myshop.com",
                "shop.example.org",
                "shopping.net",
                "percent-100.com",
                "xn--bcher-kva.example",
            },
        ),  # blank search: no filter
    ],
)
async def test_search_is_a_case_insensitive_substring(
    client: httpx.AsyncClient,
    api_key: IssuedKey,
    make_domains: DomainFactory,
    term: str,
    expected: set[str],
) -> None:
    names = ["myshop.com", "shop.example.org", "shopping.net", "percent-100.com", "bücher.example"]
    await make_domains(api_key.account_id, names)
    body = (await client.get(LIST, params={"search": term}, headers=bearer(api_key.key))).json()
    assert {d["name"] for d in body["data"]} == expected
    assert body["meta"]["total"] == len(expected)


async def test_meta_links_window_with_many_pages(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    await make_domains(api_key.account_id, [f"w{i:03d}.com" for i in range(200)])  # 20 pages

    async def labels(page: int) -> list[str]:
        params = {"per_page": "10", "page": str(page)}
        body = (await client.get(LIST, params=params, headers=bearer(api_key.key))).json()
        assert body["meta"]["last_page"] == 20
        active = [link["label"] for link in body["meta"]["links"] if link["active"]]
        assert active == [str(page)]
        return [link["label"] for link in body["meta"]["links"]][1:-1]

    assert await labels(1) == [*map(str, range(1, 11)), "...", "19", "20"]
    assert await labels(7) == [*map(str, range(1, 11)), "...", "19", "20"]
    assert await labels(10) == ["1", "2", "...", *map(str, range(7, 14)), "...", "19", "20"]
    assert await labels(14) == ["1", "2", "...", *map(str, range(11, 21))]
    assert await labels(20) == ["1", "2", "...", *map(str, range(11, 21))]


async def test_search_with_many_matches_uses_the_scan_and_agrees(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    """Over 2,000 candidates: the scan plan must return what the candidate plan would."""
    names = [f"bulk-{i:04d}.com" for i in range(2100)] + [f"rare-{i}.org" for i in range(3)]
    await make_domains(api_key.account_id, names)
    auth = bearer(api_key.key)
    params = {"search": "bulk", "sort_by": "name", "sort": "asc", "per_page": "100", "page": "3"}
    body = (await client.get(LIST, params=params, headers=auth)).json()
    assert body["meta"]["total"] == 2100
    assert [d["name"] for d in body["data"]] == [f"bulk-{i:04d}.com" for i in range(200, 300)]
    last = (await client.get(LIST, params={**params, "page": "22"}, headers=auth)).json()
    assert [d["name"] for d in last["data"]] == [f"bulk-{i:04d}.com" for i in range(2100, 2100)]
    tail = (await client.get(LIST, params={**params, "page": "21"}, headers=auth)).json()
    assert [d["name"] for d in tail["data"]] == [f"bulk-{i:04d}.com" for i in range(2000, 2100)]
    rare = (await client.get(LIST, params={"search": "rare"}, headers=auth)).json()
    assert [d["name"] for d in rare["data"]] == ["rare-2.org", "rare-1.org", "rare-0.org"]
    unfiltered = (await client.get(LIST, params={"per_page": "10"}, headers=auth)).json()
    assert unfiltered["meta"]["total"] == 2103
