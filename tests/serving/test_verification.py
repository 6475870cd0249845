"""A domain is served only once its owner proved control of the name in DNS: a TXT
token, or the name pointing at the deployment; and no Host ever captures the service's own
paths. DNS answers come from a server of the test's own on loopback."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.conftest import KeyFactory, bearer
from tests.dns_server import DNSServer, module_dns, shared_dns
from tests.domains.conftest import PUBLIC_URL, DomainFactory

__all__ = ["module_dns", "shared_dns"]

DOMAINS = "/api/v1/domains"
INDEX = "https://landing.example.org/welcome"
MISSING = "https://landing.example.org/missing"


@pytest.fixture
def verify_target() -> list[str]:
    return []


@pytest.fixture
def settings_overrides(shared_dns: DNSServer, verify_target: list[str]) -> dict[str, object]:
    return {
        "rate_limit_standard": "1000000/hour",
        "public_url": PUBLIC_URL,
        "dns_nameservers": [shared_dns.address],
        "domain_verify_target": verify_target,
    }


async def _store(client: httpx.AsyncClient, auth: dict[str, str], name: str) -> dict[str, Any]:
    body = {"name": name, "index_page": INDEX, "not_found_page": MISSING}
    response = await client.post(DOMAINS, data=body, headers=auth)
    assert response.status_code == 201, response.text
    domain: dict[str, Any] = response.json()["data"]
    return domain


async def _verify(client: httpx.AsyncClient, auth: dict[str, str], domain_id: int) -> bool:
    response = await client.post(f"{DOMAINS}/{domain_id}/verify", headers=auth)
    assert response.status_code == 200, response.text
    verified: bool = response.json()["data"]["verified"]
    return verified


async def _served(client: httpx.AsyncClient, host: str) -> bool:
    response = await client.get("/", headers={"Host": host})
    if response.status_code == 302:
        assert response.headers["location"] == INDEX
        return True
    assert response.headers["content-type"] == "application/json"  # the API's own 404
    return False


async def test_a_stored_domain_is_not_served_until_verified(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    domain = await _store(client, auth, "Shop.Test")
    # phpShort's fields as before, then the verification state and what to publish.
    assert list(domain)[:7] == [
        "id",
        "name",
        "url",
        "index_page",
        "not_found_page",
        "created_at",
        "updated_at",
    ]
    assert domain["verified"] is False
    challenge = domain["verification"]
    assert challenge["txt_name"] == "_atrium-challenge.shop.test"
    assert len(challenge["txt_value"]) == 32 and int(challenge["txt_value"], 16) >= 0
    shown = (await client.get(f"{DOMAINS}/{domain['id']}", headers=auth)).json()["data"]
    assert shown == domain
    assert not await _served(client, "shop.test")

    # Nothing published yet: verify says no, and still nothing is served.
    assert await _verify(client, auth, domain["id"]) is False
    assert shared_dns.asked("_atrium-challenge.shop.test") == ["TXT"]
    assert not await _served(client, "shop.test")


async def test_the_txt_token_verifies_the_domain(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    domain = await _store(client, auth, "shop.test")
    token = domain["verification"]["txt_value"]
    shared_dns.records["_atrium-challenge.shop.test"] = {"TXT": ["some-other-token", "v=spf1"]}
    assert await _verify(client, auth, domain["id"]) is False
    shared_dns.records["_atrium-challenge.shop.test"] = {"TXT": ["v=spf1", token]}
    assert await _verify(client, auth, domain["id"]) is True
    assert await _served(client, "shop.test")
    listed = (await client.get(DOMAINS, headers=auth)).json()["data"]
    assert [item["verified"] for item in listed] == [True]
    # Verified for good: later calls answer without a lookup, even once the record is gone.
    asked = len(shared_dns.queries)
    shared_dns.records.clear()
    assert await _verify(client, auth, domain["id"]) is True
    assert len(shared_dns.queries) == asked
    assert await _served(client, "shop.test")


async def test_a_token_published_for_an_earlier_claim_verifies_no_later_one(
    client: httpx.AsyncClient, make_key: KeyFactory, shared_dns: DNSServer
) -> None:
    """Tokens are random per stored domain: the record the first owner left behind does not
    hand the name to whoever stores it next."""
    first, second = bearer((await make_key()).key), bearer((await make_key()).key)
    claimed = await _store(client, first, "shop.test")
    token = claimed["verification"]["txt_value"]
    shared_dns.records["_atrium-challenge.shop.test"] = {"TXT": [token]}
    assert await _verify(client, first, claimed["id"]) is True
    assert (await client.delete(f"{DOMAINS}/{claimed['id']}", headers=first)).status_code == 200
    again = await _store(client, second, "shop.test")
    assert again["verification"]["txt_value"] != token
    assert await _verify(client, second, again["id"]) is False
    assert not await _served(client, "shop.test")


@pytest.mark.parametrize("verify_target", [["deploy.test", "127.0.0.9"]])
async def test_a_name_pointing_at_the_deployment_is_verified(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    shared_dns.records["deploy.test"] = {"A": ["127.0.0.7"], "AAAA": ["fd00::7"]}
    shared_dns.records["direct.test"] = {"A": ["127.0.0.7"]}
    shared_dns.records["six.test"] = {"AAAA": ["fd00::7"]}
    shared_dns.records["alias.test"] = {"CNAME": ["deploy.test"]}
    shared_dns.records["literal.test"] = {"A": ["127.0.0.9"]}
    shared_dns.records["elsewhere.test"] = {"A": ["127.0.0.8"]}
    for name, expected in [
        ("direct.test", True),
        ("six.test", True),
        ("alias.test", True),
        ("literal.test", True),
        ("elsewhere.test", False),
        ("unknown.test", False),
    ]:
        domain = await _store(client, auth, name)
        assert await _verify(client, auth, domain["id"]) is expected, name
        assert await _served(client, name) is expected, name


async def test_without_a_target_pointing_at_the_deployment_proves_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    shared_dns.records["deploy.test"] = {"A": ["127.0.0.7"]}
    shared_dns.records["direct.test"] = {"A": ["127.0.0.7"]}
    domain = await _store(client, auth, "direct.test")
    assert await _verify(client, auth, domain["id"]) is False


@pytest.mark.parametrize(
    "settings_overrides", [{"dns_nameservers": ["127.0.0.1:9"], "dns_timeout_seconds": 0.5}]
)
async def test_an_unanswered_lookup_leaves_the_domain_unverified(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    domain = await _store(client, auth, "shop.test")
    assert await _verify(client, auth, domain["id"]) is False


async def test_another_account_can_neither_verify_nor_see_a_domain(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_key: KeyFactory,
    shared_dns: DNSServer,
) -> None:
    domain = await _store(client, auth, "shop.test")
    shared_dns.records["_atrium-challenge.shop.test"] = {
        "TXT": [domain["verification"]["txt_value"]]
    }
    other = bearer((await make_key()).key)
    for path in (f"{DOMAINS}/{domain['id']}/verify",):
        response = await client.post(path, headers=other)
        assert response.status_code == 404, response.text
        assert "shop.test" not in response.text
    response = await client.get(f"{DOMAINS}/{domain['id']}", headers=other)
    assert response.status_code == 404
    assert domain["verification"]["txt_value"] not in response.text
    assert shared_dns.queries == []  # the other account's call looked nothing up
    shown = (await client.get(f"{DOMAINS}/{domain['id']}", headers=auth)).json()["data"]
    assert shown["verified"] is False
    assert (await client.post(f"{DOMAINS}/nope/verify", headers=auth)).status_code == 400


RESERVED = [
    "/api/v1/domains",
    "/api/v1/spaces",
    "/api/v1/public/agent/runs",
    "/api/anything",
    "/v1/agents",
    "/v1/account",
    "/dashboard",
    "/dashboard/",
    "/docs",
    "/redoc",
    "/openapi.json",
    "/metrics",
    "/healthz",
    "/readyz",
    "//api/v1/domains",
    "/API/v1/domains",
    "/x/../api/v1/domains",
]


@pytest.mark.parametrize("path", RESERVED)
async def test_the_service_paths_are_never_redirected_whatever_the_host(
    client: httpx.AsyncClient,
    api_key: IssuedKey,
    make_domains: DomainFactory,
    path: str,
) -> None:
    await make_domains(
        api_key.account_id,
        ["go.test"],
        verified=True,
        index_page=INDEX,
        not_found_page=MISSING,
    )
    for method in ("GET", "POST", "HEAD"):
        response = await client.request(
            method, path, headers={"Host": "go.test", **bearer(api_key.key)}
        )
        # (`/dashboard` redirects to `/dashboard/` itself: never to the domain's pages.)
        assert response.headers.get("location") not in (INDEX, MISSING), method
    assert (await client.get("/elsewhere", headers={"Host": "go.test"})).status_code == 302


async def test_the_api_answers_on_a_served_domains_host(
    client: httpx.AsyncClient, api_key: IssuedKey, make_domains: DomainFactory
) -> None:
    await make_domains(api_key.account_id, ["go.test"], verified=True, index_page=INDEX)
    listed = await client.get(DOMAINS, headers={"Host": "go.test", **bearer(api_key.key)})
    assert listed.status_code == 200 and listed.json()["data"][0]["name"] == "go.test"
    assert (await client.get("/healthz", headers={"Host": "go.test"})).status_code == 200
    dashboard = await client.get("/dashboard/", headers={"Host": "go.test"})
    assert dashboard.status_code == 200 and "text/html" in dashboard.headers["content-type"]
