"""`/v1/webhooks`: create (secret shown once), list, read, delete; every 400 names its parameter."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import RUNS

HOOKS = "/v1/webhooks"


async def _create(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(
        HOOKS, json={"url": "https://hooks.example.test/a", **body}, headers=auth
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_create_list_get_delete(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    first = await _create(client, auth)
    assert first["webhook_id"].startswith("wh_")
    assert first["url"] == "https://hooks.example.test/a"
    assert first["events"] == ["run.completed", "run.failed", "run.cancelled"]
    assert first["secret"].startswith("whsec_") and len(first["secret"]) == 6 + 32
    assert first["created_at"].endswith("Z")
    second = await _create(client, auth, url="http://hooks.example.test/b", events=["run.failed"])
    assert second["events"] == ["run.failed"]
    assert second["secret"] != first["secret"]

    listed = await client.get(HOOKS, headers=auth)
    assert listed.status_code == 200
    assert [hook["webhook_id"] for hook in listed.json()["data"]] == [
        first["webhook_id"],
        second["webhook_id"],
    ]
    assert "secret" not in listed.text and first["secret"] not in listed.text
    one = await client.get(f"{HOOKS}/{first['webhook_id']}", headers=auth)
    assert one.status_code == 200
    assert one.json() == {key: value for key, value in first.items() if key != "secret"}

    deleted = await client.delete(f"{HOOKS}/{first['webhook_id']}", headers=auth)
    assert deleted.status_code == 200
    assert deleted.json() == {"webhook_id": first["webhook_id"], "deleted": True}
    for method in ("GET", "DELETE"):
        gone = await client.request(method, f"{HOOKS}/{first['webhook_id']}", headers=auth)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"
    gone = await client.get(f"{HOOKS}/{first['webhook_id']}/deliveries", headers=auth)
    assert gone.status_code == 404
    assert [
        hook["webhook_id"] for hook in (await client.get(HOOKS, headers=auth)).json()["data"]
    ] == [second["webhook_id"]]


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({}, "url"),
        ({"url": None}, "url"),
        ({"url": 5}, "url"),
        ({"url": ""}, "url"),
        ({"url": "hooks.example.test/no-scheme"}, "url"),
        ({"url": "ftp://hooks.example.test/"}, "url"),
        ({"url": "javascript:alert(1)"}, "url"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"url": "http://"}, "url"),
        ({"url": "http:///path"}, "url"),
        ({"url": "https://hooks.example.test:99999/"}, "url"),
        ({"url": "https://user:pw@hooks.example.test/"}, "url"),
        ({"url": "https://hooks.example.test/a b"}, "url"),
        ({"url": "https://hooks.example.test/\u0000"}, "url"),
        ({"url": "https://hooks.example.test/" + "a" * 2048}, "url"),
        ({"url": "https://hooks.example.test/", "events": []}, "events"),
        ({"url": "https://hooks.example.test/", "events": ["run.started"]}, "events"),
        ({"url": "https://hooks.example.test/", "events": ["run.failed", "run.failed"]}, "events"),
        ({"url": "https://hooks.example.test/", "events": "run.failed"}, "events"),
        ({"url": "https://hooks.example.test/", "events": [1]}, "events.0"),
        ({"url": "https://hooks.example.test/", "secret": "mine"}, "secret"),
    ],
)
async def test_invalid_bodies_are_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any], parameter: str
) -> None:
    response = await client.post(HOOKS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter, error


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hook",
        "http://127.1.2.3:8080/",
        "http://localhost/hook",
        "http://LOCALHOST./",
        "http://app.localhost/",
        "http://10.0.0.5/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0/",
        "http://224.0.0.1/",
        "http://127.1/",
        "http://0x7f000001/",
        "http://2130706433:80/",
        # Not private, yet not globally routable either (a cloud's metadata service).
        "http://100.100.100.200/latest/meta-data/",
        "http://[::ffff:100.100.100.200]/",
        "http://100.64.0.1/",
        "http://[fec0::1]/",
        "http://[64:ff9b::a00:1]/",
        "http://0x7f.1/",
    ],
)
@pytest.mark.parametrize("settings_overrides", [{}])
async def test_private_targets_are_refused_by_default(
    client: httpx.AsyncClient, auth: dict[str, str], url: str
) -> None:
    for path, body, parameter in (
        (HOOKS, {"url": url}, "url"),
        (RUNS, {"prompt": "hi", "webhook_url": url}, "webhook_url"),
    ):
        response = await client.post(path, json=body, headers=auth)
        assert response.status_code == 400, (url, response.text)
        error = response.json()["error"]
        assert error["details"]["parameter"] == parameter
        assert "ATRIUM_ALLOW_PRIVATE_TARGETS=true" in error["message"], error


@pytest.mark.parametrize("settings_overrides", [{}])
async def test_public_names_are_accepted_by_default(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    # No lookup at registration: a name is checked on every attempt, where it resolves then.
    await _create(client, auth, url="https://hooks.example.test:8443/path?q=1")
    await _create(client, auth, url="http://93.184.216.34/hook")


@pytest.mark.parametrize("settings_overrides", [{"webhook_max_endpoints_per_account": 2}])
async def test_the_number_of_endpoints_is_capped(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    await _create(client, auth)
    await _create(client, auth)
    response = await client.post(HOOKS, json={"url": "https://hooks.example.test/"}, headers=auth)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "url"
    other = bearer((await make_key()).key)  # the cap is per account
    await _create(client, other)


async def test_another_account_gets_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    hook = await _create(client, auth)
    intruder = bearer((await make_key()).key)
    for method, suffix in (("GET", ""), ("DELETE", ""), ("GET", "/deliveries")):
        response = await client.request(
            method, f"{HOOKS}/{hook['webhook_id']}{suffix}", headers=intruder
        )
        assert response.status_code == 404, (method, suffix, response.text)
        assert hook["url"] not in response.text
    assert (await client.get(HOOKS, headers=intruder)).json() == {"data": []}
    assert (await client.get(f"{HOOKS}/{hook['webhook_id']}", headers=auth)).status_code == 200


@pytest.mark.parametrize("webhook_id", ["nope", "wh_" + "x" * 100, "wh_%00", "deliveries-x"])
async def test_unknown_ids_are_404(
    client: httpx.AsyncClient, auth: dict[str, str], webhook_id: str
) -> None:
    response = await client.get(f"{HOOKS}/{webhook_id}", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["details"]["parameter"] == "webhook_id"


@pytest.mark.parametrize(
    ("query", "parameter"), [("limit=0", "limit"), ("limit=201", "limit"), ("limit=x", "limit")]
)
async def test_delivery_listing_bounds(
    client: httpx.AsyncClient, auth: dict[str, str], query: str, parameter: str
) -> None:
    hook = await _create(client, auth)
    for path in (f"{HOOKS}/deliveries", f"{HOOKS}/{hook['webhook_id']}/deliveries"):
        response = await client.get(f"{path}?{query}", headers=auth)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["parameter"] == parameter
    listed = await client.get(f"{HOOKS}/deliveries?run_id=run_nope&limit=200", headers=auth)
    assert listed.status_code == 200
    assert listed.json() == {"data": [], "has_more": False, "next_cursor": None}


async def test_a_run_webhook_url_is_validated(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for url in ("ftp://hooks.example.test/", "not a url", 7, "http://"):
        response = await client.post(RUNS, json={"prompt": "hi", "webhook_url": url}, headers=auth)
        assert response.status_code == 400, (url, response.text)
        assert response.json()["error"]["details"]["parameter"] == "webhook_url"


@pytest.mark.parametrize(
    "url",
    [
        "http://xn--/x",
        "http://xn--a.xn--/",
        "https://xn--zz.example.test/",
        "https://hooks.xn--zz.example.test/",
        "http://a..b/",
        "https://" + "a" * 64 + ".example.test/",
    ],
)
async def test_a_malformed_host_is_a_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], url: str
) -> None:
    """The one outbound check takes every registered URL: webhook endpoints, runs' webhook_url
    and MCP servers."""
    mcp = {"type": "mcp", "server_label": "docs", "server_url": url}
    for path, body, parameter in (
        (HOOKS, {"url": url}, "url"),
        (RUNS, {"prompt": "hi", "webhook_url": url}, "webhook_url"),
        ("/v1/agents", {"name": "a", "config": {"tools": [mcp]}}, "config.tools"),
    ):
        response = await client.post(path, json=body, headers=auth)
        assert response.status_code == 400, (url, response.text)
        error = response.json()["error"]
        assert (error["code"], error["details"]["parameter"]) == ("INVALID_PARAMETER", parameter)
        assert "is not a valid URL (host)" in error["message"], error
    assert (await client.get(HOOKS, headers=auth)).json()["data"] == []
