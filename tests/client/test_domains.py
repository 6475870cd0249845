"""Domains and spaces from the Python client and the `atrium domains|spaces` commands, against a
real server whose DNS lookups go to a loopback DNS server of the test's own."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from atrium.client import AsyncClient, Client
from tests.client.conftest import Server, _serve
from tests.dns_server import DNSServer


@pytest.fixture(scope="module")
def dns() -> Iterator[DNSServer]:
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def domains_server(tmp_path_factory: pytest.TempPathFactory, dns: DNSServer) -> Iterator[Server]:
    """An `atrium serve` that asks only `dns` (its agents are never run here: no model)."""
    yield from _serve(
        tmp_path_factory.mktemp("domains-server"),
        "domains",
        "http://127.0.0.1:9/v1",
        ATRIUM_DNS_NAMESERVERS=dns.address,
        ATRIUM_DNS_TIMEOUT_SECONDS="2",
    )


@pytest.fixture
def user(domains_server: Server, dns: DNSServer) -> Server:
    """The server as a new account sees it, the DNS server emptied."""
    dns.reset()
    key = domains_server.new_key()
    return Server(
        url=domains_server.url,
        port=domains_server.port,
        env={**domains_server.env, "ATRIUM_API_KEY": key, "COLUMNS": "120"},
        log=domains_server.log,
    )


def _key(user: Server) -> str:
    return user.env["ATRIUM_API_KEY"]


def test_the_client_verifies_a_domain(user: Server, dns: DNSServer) -> None:
    with Client(user.url, _key(user)) as atrium:
        domain = atrium.domains.create("Shop.Test", index_page="https://example.org/")
        assert domain.name == "shop.test" and domain.verified is False
        assert domain.verification is not None
        assert domain.verification.txt_name == "_atrium-challenge.shop.test"
        assert domain.verification.last_error is None
        assert domain.verification.checked_at is None

        checked = atrium.domains.verify(domain.id)
        assert checked.verified is False and checked.verification is not None
        assert checked.verification.last_error == "txt_missing"
        assert checked.verification.checked_at is not None

        dns.records["_atrium-challenge.shop.test"] = {"TXT": [domain.verification.txt_value]}
        verified = atrium.domains.verify(domain.id)
        assert verified.verified is True and verified.verification is not None
        assert verified.verification.last_error is None
        assert atrium.domains.get(domain.id).verified is True


async def test_the_async_client_verifies_a_domain(user: Server, dns: DNSServer) -> None:
    async with AsyncClient(user.url, _key(user)) as atrium:
        domain = await atrium.domains.create("async.test")
        assert domain.verification is not None
        dns.records["_atrium-challenge.async.test"] = {"TXT": ["someone-else"]}
        checked = await atrium.domains.verify(domain.id)
        assert checked.verification is not None
        assert checked.verification.last_error == "txt_mismatch"


def test_domains_commands_from_create_to_verified(user: Server, dns: DNSServer) -> None:
    created = user.cli(
        "domains", "create", "links.example.test", "--index-page", "https://example.org/in"
    )
    assert created.returncode == 0, created.stderr
    assert "links.example.test is not verified yet (not checked)." in created.stdout
    assert "_atrium-challenge.links.example.test" in created.stdout

    as_json = user.cli("domains", "list", "--json")
    assert as_json.returncode == 0, as_json.stderr
    page = json.loads(as_json.stdout)
    [domain] = page["data"]
    assert page["meta"]["total"] == 1
    domain_id, token = str(domain["id"]), domain["verification"]["txt_value"]

    missing = user.cli("domains", "verify", domain_id)
    assert missing.returncode == 0, missing.stderr
    lines = missing.stdout.splitlines()
    assert lines[0].startswith(
        "links.example.test is not verified: no TXT record at "
        "_atrium-challenge.links.example.test (checked "
    )
    assert f"Publish this DNS record, then run: atrium domains verify {domain_id}" in lines
    record = [line.split() for line in lines[2:5]]
    assert record == [
        ["name", "_atrium-challenge.links.example.test"],
        ["type", "TXT"],
        ["value", token],
    ]

    dns.records["_atrium-challenge.links.example.test"] = {"TXT": [token.upper()]}
    wrong = user.cli("domains", "verify", domain_id, "--json")
    shown = json.loads(wrong.stdout)
    assert shown["verified"] is False
    assert shown["verification"]["last_error"] == "txt_mismatch"

    dns.records["_atrium-challenge.links.example.test"] = {"TXT": [token]}
    verified = user.cli("domains", "verify", domain_id)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("links.example.test is verified: atrium serves it (checked")
    listed = user.cli("domains", "list")
    assert "links.example.test" in listed.stdout and " yes " in listed.stdout

    updated = user.cli("domains", "update", domain_id, "--not-found-page", "https://example.org/x")
    assert updated.returncode == 0, updated.stderr
    assert "https://example.org/x" in updated.stdout
    cleared = user.cli("domains", "update", domain_id, "--index-page", "", "--json")
    assert json.loads(cleared.stdout)["index_page"] is None
    nothing = user.cli("domains", "update", domain_id)
    assert nothing.returncode == 2 and "--index-page" in nothing.stderr
    refused = user.cli("domains", "update", domain_id, "--index-page", "ftp://example.org/")
    assert refused.returncode == 1 and "(parameter: index_page)" in refused.stderr

    deleted = user.cli("domains", "delete", domain_id)
    assert deleted.returncode == 0 and f"Domain {domain_id} deleted." in deleted.stdout
    gone = user.cli("domains", "get", domain_id)
    assert gone.returncode == 1 and "404" in gone.stderr
    assert user.cli("domains", "list").stdout.startswith("No domains yet.")


def test_domains_list_pages_and_searches(user: Server) -> None:
    with Client(user.url, _key(user)) as atrium:
        for index in range(12):
            atrium.domains.create(f"site{index:02d}.example.test")
    first = user.cli("domains", "list", "--per-page", "10", "--sort-by", "name", "--sort", "asc")
    assert first.returncode == 0, first.stderr
    assert first.stdout.index("site00") < first.stdout.index("site09")
    assert "site10" not in first.stdout
    assert "Page 1 of 2 (12 domains). Next: atrium domains list --page 2" in first.stderr
    found = user.cli("domains", "list", "--search", "SITE1", "--json")
    assert [d["name"] for d in json.loads(found.stdout)["data"]] == [
        "site11.example.test",
        "site10.example.test",
    ]
    assert user.cli("domains", "list", "--search", "nope").stdout.strip() == "No domains match."
    bad = user.cli("domains", "list", "--per-page", "7")
    assert bad.returncode == 2


def test_spaces_commands(user: Server) -> None:
    assert user.cli("spaces", "list").stdout.startswith("No spaces yet.")
    created = user.cli("spaces", "create", "Marketing", "--color", "3", "--json")
    assert created.returncode == 0, created.stderr
    space = json.loads(created.stdout)
    assert (space["name"], space["color"]) == ("Marketing", 3)
    space_id = str(space["id"])
    assert user.cli("spaces", "create", "Research").returncode == 0

    listed = user.cli("spaces", "list", "--sort-by", "name", "--sort", "asc")
    assert listed.stdout.index("Marketing") < listed.stdout.index("Research")
    assert "3 pink" in listed.stdout

    updated = user.cli("spaces", "update", space_id, "--name", "Growth", "--color", "6")
    assert updated.returncode == 0 and "Growth" in updated.stdout and "6 teal" in updated.stdout
    assert user.cli("spaces", "update", space_id).returncode == 2
    assert user.cli("spaces", "update", space_id, "--color", "7").returncode == 2
    taken = user.cli("spaces", "create", "Growth")
    assert taken.returncode == 1 and "has already been taken" in taken.stderr

    assert json.loads(user.cli("spaces", "get", space_id, "--json").stdout)["name"] == "Growth"
    deleted = user.cli("spaces", "delete", space_id, "--json")
    assert json.loads(deleted.stdout).items() >= {"id": int(space_id), "deleted": True}.items()
    names = [s["name"] for s in json.loads(user.cli("spaces", "list", "--json").stdout)["data"]]
    assert names == ["Research"]
