"""`POST /domains/{id}/verify` says why a domain is not verified (`verification.last_error`) and
when DNS was asked (`checked_at`), and keeps both. DNS answers come from a server of the
test's own on loopback; a timeout from a socket that is bound and never answers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.dns_server import DNSServer, module_dns, shared_dns
from tests.domains.conftest import PUBLIC_URL

__all__ = ["module_dns", "shared_dns"]

DOMAINS = "/api/v1/domains"
CHALLENGE = "_atrium-challenge.shop.test"
ERRORS = {"txt_missing", "txt_mismatch", "address_mismatch", "dns_timeout", "dns_error"}


@pytest.fixture(scope="module")
def silent_nameserver() -> Iterator[str]:
    """A loopback UDP port that takes queries and never answers them."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    yield f"{host}:{port}"
    sock.close()


@pytest.fixture
def verify_target() -> list[str]:
    return []


@pytest.fixture
def silent() -> bool:
    """Whether the app asks the nameserver that never answers (with a short deadline)."""
    return False


@pytest.fixture
def settings_overrides(
    shared_dns: DNSServer, silent_nameserver: str, silent: bool, verify_target: list[str]
) -> dict[str, object]:
    overrides: dict[str, object] = {
        "rate_limit_standard": "1000000/hour",
        "public_url": PUBLIC_URL,
        "dns_nameservers": [shared_dns.address],
        "domain_verify_target": verify_target,
    }
    if silent:
        overrides.update(dns_nameservers=[silent_nameserver], dns_timeout_seconds=0.3)
    return overrides


async def _store(client: httpx.AsyncClient, auth: dict[str, str], name: str) -> dict[str, Any]:
    response = await client.post(
        DOMAINS, data={"name": name, "index_page": "https://landing.example.org/"}, headers=auth
    )
    assert response.status_code == 201, response.text
    domain: dict[str, Any] = response.json()["data"]
    return domain


async def _verify(client: httpx.AsyncClient, auth: dict[str, str], domain_id: int) -> Any:
    response = await client.post(f"{DOMAINS}/{domain_id}/verify", headers=auth)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def _timestamp(text: str) -> datetime:
    assert text.endswith("Z"), text
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


async def test_a_new_domain_says_what_to_publish_and_was_never_checked(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    domain = await _store(client, auth, "Shop.Test")
    assert domain["verified"] is False
    verification = domain["verification"]
    assert list(verification) == ["txt_name", "txt_value", "last_error", "checked_at"]
    assert verification["txt_name"] == CHALLENGE
    assert verification["last_error"] is None and verification["checked_at"] is None


async def test_no_record_is_txt_missing_and_the_check_is_kept(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    domain = await _store(client, auth, "shop.test")
    before = datetime.now(UTC)
    checked = await _verify(client, auth, domain["id"])
    assert checked["verified"] is False
    assert checked["verification"]["last_error"] == "txt_missing"
    assert before <= _timestamp(checked["verification"]["checked_at"]) <= datetime.now(UTC)
    # What to publish is unchanged; a check that found nothing is no edit of the domain.
    assert checked["verification"]["txt_value"] == domain["verification"]["txt_value"]
    assert checked["updated_at"] == domain["updated_at"]
    shown = (await client.get(f"{DOMAINS}/{domain['id']}", headers=auth)).json()["data"]
    assert shown == checked
    listed = (await client.get(DOMAINS, headers=auth)).json()["data"]
    assert listed == [checked]

    # The name exists but has no TXT record there: missing all the same.
    shared_dns.records[CHALLENGE] = {"A": ["127.0.0.1"]}
    again = await _verify(client, auth, domain["id"])
    assert again["verification"]["last_error"] == "txt_missing"
    assert again["verification"]["checked_at"] > checked["verification"]["checked_at"]


async def test_a_wrong_token_is_txt_mismatch_then_the_right_one_verifies(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    domain = await _store(client, auth, "shop.test")
    token = domain["verification"]["txt_value"]
    shared_dns.records[CHALLENGE] = {"TXT": ["v=spf1 -all", token[:-1]]}
    wrong = await _verify(client, auth, domain["id"])
    assert (wrong["verified"], wrong["verification"]["last_error"]) == (False, "txt_mismatch")

    shared_dns.records[CHALLENGE] = {"TXT": ["v=spf1 -all", token]}
    right = await _verify(client, auth, domain["id"])
    assert right["verified"] is True
    assert right["verification"]["last_error"] is None
    checked_at = right["verification"]["checked_at"]
    assert checked_at > wrong["verification"]["checked_at"]
    served = await client.get("/", headers={"Host": "shop.test"})
    assert served.status_code == 302

    # Verified for good: no lookup, and the check that verified it stays the last one.
    asked = len(shared_dns.queries)
    shared_dns.records.clear()
    later = await _verify(client, auth, domain["id"])
    assert later["verified"] is True and later["verification"]["checked_at"] == checked_at
    assert len(shared_dns.queries) == asked


async def test_a_server_failure_is_dns_error(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    domain = await _store(client, auth, "shop.test")
    shared_dns.failing.add(CHALLENGE)
    checked = await _verify(client, auth, domain["id"])
    assert checked["verification"]["last_error"] == "dns_error"


@pytest.mark.parametrize("verify_target", [["deploy.test"]])
async def test_the_address_proof_says_when_the_name_points_elsewhere(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer
) -> None:
    shared_dns.records["deploy.test"] = {"A": ["127.0.0.7"]}
    shared_dns.records["elsewhere.test"] = {"A": ["127.0.0.8"]}
    shared_dns.records["here.test"] = {"CNAME": ["deploy.test"]}
    elsewhere = await _store(client, auth, "elsewhere.test")
    checked = await _verify(client, auth, elsewhere["id"])
    assert checked["verification"]["last_error"] == "address_mismatch"
    # A TXT record with the wrong token says more about what the owner tried.
    shared_dns.records["_atrium-challenge.elsewhere.test"] = {"TXT": ["not-the-token"]}
    checked = await _verify(client, auth, elsewhere["id"])
    assert checked["verification"]["last_error"] == "txt_mismatch"
    # A name with no address and no record: the record is what is missing.
    nowhere = await _store(client, auth, "nowhere.test")
    checked = await _verify(client, auth, nowhere["id"])
    assert checked["verification"]["last_error"] == "txt_missing"
    here = await _store(client, auth, "here.test")
    checked = await _verify(client, auth, here["id"])
    assert checked["verified"] is True and checked["verification"]["last_error"] is None


@pytest.mark.parametrize("silent", [True])
@pytest.mark.parametrize("verify_target", [[], ["deploy.test"]])
async def test_an_unanswered_lookup_is_dns_timeout(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    domain = await _store(client, auth, "shop.test")
    checked = await _verify(client, auth, domain["id"])
    assert checked["verified"] is False
    assert checked["verification"]["last_error"] == "dns_timeout"


async def test_the_document_lists_every_reason(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    last_error = schemas["DomainVerification"]["properties"]["last_error"]
    reasons = next(
        schemas[option["$ref"].rsplit("/", 1)[1]]
        for option in last_error["anyOf"]
        if "$ref" in option
    )
    assert set(reasons["enum"]) == ERRORS
    assert "txt_missing" in last_error["description"]
