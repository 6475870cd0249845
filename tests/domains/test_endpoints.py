"""Domains CRUD over HTTP: phpShort's bodies, atrium's field rules (docs/design.md#domains), the
one error model."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.conftest import KeyFactory, bearer
from tests.domains.conftest import DomainFactory

DOMAIN_FIELDS = {"id", "name", "url", "index_page", "not_found_page", "created_at", "updated_at"}
# atrium's own, after phpShort's (a domain is served once verified: docs/guide/domains.md).
VERIFICATION_FIELDS = {"verified", "verification"}
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")


def assert_invalid(response: httpx.Response, parameter: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter
    assert error["message"]


async def store(client: httpx.AsyncClient, auth: dict[str, str], **form: str) -> httpx.Response:
    return await client.post("/api/v1/domains", data=form, headers=auth)


async def test_store_returns_phpshort_body(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await store(
        client,
        auth,
        name="Example.COM",
        index_page="https://example.org/home",
        not_found_page="http://example.org/missing?x=1",
    )
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"data", "status"}
    assert body["status"] == 200  # phpShort's resources say 200 in the body, HTTP 201 or not
    data = body["data"]
    assert set(data) == DOMAIN_FIELDS | VERIFICATION_FIELDS
    assert isinstance(data["id"], int)
    assert data["name"] == "example.com"
    assert data["url"] == "https://example.com"
    assert data["index_page"] == "https://example.org/home"
    assert data["not_found_page"] == "http://example.org/missing?x=1"
    assert TIMESTAMP.match(data["created_at"])
    assert data["created_at"] == data["updated_at"]


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        ("  Example.COM  ", "example.com"),
        ("https://Shop.Example.net/", "shop.example.net"),
        ("http://example.io//", "example.io"),
        ("example.dev.", "example.dev"),
        ("Bücher.example", "xn--bcher-kva.example"),
        ("https://Straße.de/", "xn--strae-oqa.de"),
        ("xn--bcher-kva.example.com", "xn--bcher-kva.example.com"),
        ("a-b.c-d.example", "a-b.c-d.example"),
        ("x" * 63 + ".com", "x" * 63 + ".com"),
    ],
)
async def test_name_is_normalised(
    client: httpx.AsyncClient, auth: dict[str, str], raw: str, stored: str
) -> None:
    response = await store(client, auth, name=raw)
    assert response.status_code == 201, response.text
    assert response.json()["data"]["name"] == stored
    assert response.json()["data"]["url"] == f"https://{stored}"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "localhost",
        "example",
        "1.2.3.4",
        "example.123",
        "under_score.com",
        "-leading.com",
        "trailing-.com",
        "two..dots.com",
        "spa ce.com",
        "example.com/path",
        "example.com:8080",
        "user@example.com",
        "x" * 64 + ".com",
        ".".join(["abcdefghi"] * 26) + ".com",  # 264 characters
        "x" * 5000,
        "xn--zz.com",
        "😀.com",
        "https://",
        "atrium.example.org",  # the service's own host
        "nul\x00.com",
    ],
)
async def test_invalid_name_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], raw: str
) -> None:
    assert_invalid(await store(client, auth, name=raw), "name")
    listing = await client.get("/api/v1/domains", headers=auth)
    assert listing.json()["meta"]["total"] == 0  # nothing half-written


async def test_missing_name_is_400(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    assert_invalid(await store(client, auth, index_page="https://example.org"), "name")
    assert_invalid(await client.post("/api/v1/domains", headers=auth), "name")


async def test_name_is_unique_in_the_deployment(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    assert (await store(client, auth, name="taken.com")).status_code == 201
    assert_invalid(await store(client, auth, name="TAKEN.com"), "name")
    assert_invalid(await store(client, auth, name="https://taken.com/"), "name")
    other = await make_key()
    assert_invalid(await store(client, bearer(other.key), name="taken.com"), "name")


@pytest.mark.parametrize("page", ["index_page", "not_found_page"])
@pytest.mark.parametrize(
    "value",
    [
        "example.org",
        "/relative/path",
        "ftp://example.org/file",
        "javascript:alert(1)",
        "https://",
        "http:///path-only",
        "https://exa mple.org",
        "https://example.org:99999/",
        "https://bücher.example/",
        "https://example.org/" + "a" * 2048,
    ],
)
async def test_invalid_page_url_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], page: str, value: str
) -> None:
    assert_invalid(await store(client, auth, name="pages.com", **{page: value}), page)


async def test_empty_pages_are_null(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await store(client, auth, name="empty.com", index_page="", not_found_page="  ")
    assert response.status_code == 201
    assert response.json()["data"]["index_page"] is None
    assert response.json()["data"]["not_found_page"] is None


async def test_json_and_multipart_bodies_are_accepted(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    as_json = await client.post(
        "/api/v1/domains",
        json={"name": "json.com", "index_page": "https://json.example/"},
        headers=auth,
    )
    assert as_json.status_code == 201
    assert as_json.json()["data"]["index_page"] == "https://json.example/"
    multipart = await client.post(
        "/api/v1/domains", files={"name": (None, "multipart.com")}, headers=auth
    )
    assert multipart.status_code == 201
    assert multipart.json()["data"]["name"] == "multipart.com"


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"name": 5}, "name"),
        ({"name": True}, "name"),
        ({"name": ["a.com"]}, "name"),
        ({"name": "ok.com", "index_page": 3}, "index_page"),
        ({"name": "ok.com", "not_found_page": {"u": 1}}, "not_found_page"),
        ([{"name": "ok.com"}], "body"),
        ("ok.com", "body"),
    ],
)
async def test_json_with_wrong_types_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], body: Any, parameter: str
) -> None:
    assert_invalid(await client.post("/api/v1/domains", json=body, headers=auth), parameter)


async def test_malformed_json_is_400_on_body(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        "/api/v1/domains",
        content=b'{"name": "x.com"',
        headers={**auth, "Content-Type": "application/json"},
    )
    assert_invalid(response, "body")


async def test_file_upload_is_400_on_its_field(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        "/api/v1/domains", files={"name": ("name.txt", b"file.com")}, headers=auth
    )
    assert_invalid(response, "name")


async def test_wrong_content_type_is_415(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post(
        "/api/v1/domains", content=b"name=x.com", headers={**auth, "Content-Type": "text/plain"}
    )
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "UNSUPPORTED_MEDIA_TYPE"


async def test_show(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    created = (await store(client, auth, name="show.com")).json()["data"]
    response = await client.get(f"/api/v1/domains/{created['id']}", headers=auth)
    assert response.status_code == 200
    assert response.json() == {"data": created, "status": 200}


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
async def test_unknown_and_foreign_ids_are_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory, method: str
) -> None:
    other = await make_key()
    foreign = (await store(client, bearer(other.key), name="theirs.com")).json()["data"]
    for domain_id in (foreign["id"], foreign["id"] + 1000, 2_147_483_648, 10**30):
        response = await client.request(method, f"/api/v1/domains/{domain_id}", headers=auth)
        assert response.status_code == 404, (domain_id, response.text)
        assert response.json()["error"]["code"] == "NOT_FOUND"
        assert response.json()["error"]["details"] == {"parameter": "id"}
    # The owner still sees it, untouched.
    mine = await client.get(f"/api/v1/domains/{foreign['id']}", headers=bearer(other.key))
    assert mine.json()["data"] == foreign


@pytest.mark.parametrize("raw_id", ["abc", "1.5", "-1", "0x10"])
async def test_non_integer_id_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], raw_id: str
) -> None:
    assert_invalid(await client.get(f"/api/v1/domains/{raw_id}", headers=auth), "id")


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_update_sets_clears_and_keeps(
    client: httpx.AsyncClient, auth: dict[str, str], method: str
) -> None:
    created = (
        await store(
            client,
            auth,
            name="update.com",
            index_page="https://a.example/",
            not_found_page="https://b.example/",
        )
    ).json()["data"]
    url = f"/api/v1/domains/{created['id']}"
    changed = await client.request(
        method, url, data={"index_page": "https://c.example/"}, headers=auth
    )
    assert changed.status_code == 200
    body = changed.json()
    assert body["status"] == 200
    assert body["data"]["index_page"] == "https://c.example/"
    assert body["data"]["not_found_page"] == "https://b.example/"  # absent: kept
    assert body["data"]["name"] == "update.com"
    assert body["data"]["created_at"] == created["created_at"]
    assert body["data"]["updated_at"] > created["updated_at"]
    cleared = await client.request(method, url, data={"not_found_page": ""}, headers=auth)
    assert cleared.json()["data"]["not_found_page"] is None
    assert cleared.json()["data"]["index_page"] == "https://c.example/"
    nulled = await client.request(method, url, json={"index_page": None}, headers=auth)
    assert nulled.json()["data"]["index_page"] is None
    shown = await client.get(url, headers=auth)
    assert shown.json()["data"] == nulled.json()["data"]


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
async def test_update_refuses_name_and_bad_urls_without_writing(
    client: httpx.AsyncClient, auth: dict[str, str], method: str
) -> None:
    created = (await store(client, auth, name="fixed.com")).json()["data"]
    url = f"/api/v1/domains/{created['id']}"
    assert_invalid(
        await client.request(method, url, data={"name": "other.com"}, headers=auth), "name"
    )
    bad = await client.request(
        method,
        url,
        data={"index_page": "https://ok.example/", "not_found_page": "nope"},
        headers=auth,
    )
    assert_invalid(bad, "not_found_page")
    shown = (await client.get(url, headers=auth)).json()["data"]
    assert shown == created


async def test_delete(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    created = (await store(client, auth, name="gone.com")).json()["data"]
    url = f"/api/v1/domains/{created['id']}"
    response = await client.delete(url, headers=auth)
    assert response.status_code == 200
    assert response.json() == {
        "id": created["id"],
        "object": "domain",
        "deleted": True,
        "status": 200,
    }
    assert (await client.get(url, headers=auth)).status_code == 404
    assert (await client.delete(url, headers=auth)).status_code == 404
    listing = (await client.get("/api/v1/domains", headers=auth)).json()
    assert listing["meta"]["total"] == 0
    # The name is free again, and the id is never reused.
    again = (await store(client, auth, name="gone.com")).json()["data"]
    assert again["id"] > created["id"]


@pytest.mark.parametrize("settings_overrides", [{"domain_url_scheme": "http"}])
async def test_url_scheme_is_configurable(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await store(client, auth, name="plain.com")
    assert response.json()["data"]["url"] == "http://plain.com"


async def test_lists_are_per_account(
    client: httpx.AsyncClient,
    api_key: IssuedKey,
    make_key: KeyFactory,
    make_domains: DomainFactory,
) -> None:
    other = await make_key()
    await make_domains(api_key.account_id, ["mine-1.com", "mine-2.com"])
    await make_domains(other.account_id, ["theirs-1.com"])
    mine = (await client.get("/api/v1/domains", headers=bearer(api_key.key))).json()
    assert [d["name"] for d in mine["data"]] == ["mine-2.com", "mine-1.com"]
    assert mine["meta"]["total"] == 2
    searched = await client.get("/api/v1/domains?search=theirs", headers=bearer(api_key.key))
    assert searched.json()["meta"]["total"] == 0


async def test_requires_a_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/v1/domains")).status_code == 401
    assert (await client.post("/api/v1/domains", data={"name": "x.com"})).status_code == 401
