"""Isolation matrix: another account's key gets 404 for every record and operation (never the
record, never a 403); a revoked key gets 401 on every operation of every group."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from atrium.auth.service import revoke_key
from atrium.db.engine import Database
from tests.conftest import KeyFactory, bearer
from tests.reliability.conftest import (
    OPENAPI_DOCUMENT,
    Seeded,
    assert_error,
    path_values,
    resource_paths,
    seed_account,
)
from tests.runs.helpers import RUNS

_PARAM = re.compile(r"\{([^}]+)\}")
# Bodies that would succeed for the owner, so a 404 can only come from the ownership check.
_BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("PUT", "/api/v1/domains/{id}"): {"data": {"index_page": "https://stolen.example/"}},
    ("PATCH", "/api/v1/domains/{id}"): {"data": {"not_found_page": "https://stolen.example/"}},
    ("PUT", "/api/v1/spaces/{id}"): {"data": {"name": "stolen", "color": "6"}},
    ("PATCH", "/api/v1/spaces/{id}"): {"data": {"color": "6"}},
    ("PUT", "/v1/agents/{agent_id}"): {"json": {"name": "stolen"}},
    ("PUT", "/v1/providers/{provider}"): {"json": {"name": "stolen"}},
    ("PUT", "/v1/schedules/{schedule_id}"): {"json": {"prompt": "stolen"}},
    ("PUT", "/v1/agents/{agent_id}/aliases/{alias}"): {"json": {"version": 1}},
    ("PATCH", "/v1/memory/blocks/{label}"): {"json": {"value": "stolen"}},
    ("GET", "/v1/agents/{agent_id}/versions/{number}/diff"): {"params": {"against": "1"}},
    ("POST", "/api/v1/public/agent/runs/{run_id}/actions"): {
        "json": {"tool_outputs": [{"tool_call_id": "call_1", "output": "stolen"}]}
    },
}


def _record_operations() -> list[tuple[str, str]]:
    """Every operation of every group that addresses one record by id."""
    return [
        (method.upper(), path)
        for path, item in OPENAPI_DOCUMENT["paths"].items()
        for method in item
        if path.startswith(("/v1/", "/api/v1/")) and _PARAM.search(path)
    ]


def _group_operations() -> list[tuple[str, str]]:
    return [
        (method.upper(), path)
        for path, item in OPENAPI_DOCUMENT["paths"].items()
        for method in item
        if path.startswith(("/v1/", "/api/v1/"))
    ]


def _path_of(template: str, seeded: Seeded) -> str:
    values = path_values(seeded, template)
    return _PARAM.sub(lambda match: values[match.group(1)], template)


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"rate_limit_standard": "1000000/hour", "rate_limit_anonymous": "1000000/hour"}


async def _two_accounts(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> tuple[Seeded, Seeded, dict[str, bytes]]:
    owner = await seed_account(client, bearer((await make_key(account="owner")).key), "owner")
    intruder = await seed_account(
        client, bearer((await make_key(account="intruder")).key), "intruder"
    )
    before = {
        name: (await client.get(path, headers=owner.headers)).content
        for name, path in resource_paths(owner).items()
    }
    return owner, intruder, before


async def test_another_accounts_key_gets_404_on_every_record_operation(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> None:
    owner, intruder, before = await _two_accounts(client, make_key)
    operations = _record_operations()
    assert len(operations) >= 15, operations  # every record operation of every group is here
    secrets_of_owner = [
        "owner.example.com",
        "space owner",
        "agent owner",
        "seeded prompt owner",
        "owner.hooks.example.invalid",
        "owner.models.example.invalid",
        owner.agent_id,
    ]
    for method, template in operations:
        path = _path_of(template, owner)
        body = _BODIES.get((method, template), {})
        response = await client.request(method, path, headers=intruder.headers, **body)
        error = assert_error(response, 404)
        assert error["code"] == "NOT_FOUND", (method, path)
        # Every group's 404 names the path parameter it could not resolve (the error model).
        assert error["details"].get("parameter") in _PARAM.findall(template), (path, error)
        for secret in secrets_of_owner[:-1]:
            assert secret not in response.text, (method, path, response.text)

    # Records reached through another record (a run in the owner's thread or with its agent).
    thread = (await client.get(f"{RUNS}/{owner.run_id}", headers=owner.headers)).json()
    for body in ({"thread_id": thread["thread_id"]}, {"agent_id": owner.agent_id}):
        response = await client.post(
            RUNS, json={"prompt": "borrow", **body}, headers=intruder.headers
        )
        assert_error(response, 404)
    usage = await client.get(
        "/v1/analytics/usage", params={"agent_id": owner.agent_id}, headers=intruder.headers
    )
    assert_error(usage, 404)

    # Lists never show the owner's records.
    lists = ("/api/v1/domains", "/api/v1/spaces", "/v1/agents", RUNS, "/v1/analytics/usage")
    lists = (*lists, "/api/v1/public/threads")
    for path in (*lists, "/v1/webhooks", "/v1/webhooks/deliveries"):
        listing = await client.get(path, headers=intruder.headers)
        assert listing.status_code == 200, listing.text
        for secret in secrets_of_owner:
            assert secret not in listing.text, (path, secret)
    filtered = await client.get(
        RUNS,
        params={"agent_id": owner.agent_id, "thread_id": thread["thread_id"]},
        headers=intruder.headers,
    )
    assert filtered.status_code == 200 and filtered.json()["data"] == []

    # And nothing the intruder sent changed or removed the owner's records.
    for name, path in resource_paths(owner).items():
        after = await client.get(path, headers=owner.headers)
        assert after.status_code == 200, (name, after.text)
        assert after.content == before[name], name  # a finished run's views never change


async def test_a_revoked_key_gets_401_on_every_operation(
    client: httpx.AsyncClient, make_key: KeyFactory, db: Database
) -> None:
    issued = await make_key(account="revoked")
    seeded = await seed_account(client, bearer(issued.key), "revoked")
    async with db.transaction() as session:
        await revoke_key(session, key_id=issued.key_id)
    operations = _group_operations()
    assert len(operations) >= 25, operations
    for method, template in operations:
        path = _path_of(template, seeded)
        body = _BODIES.get((method, template), {})
        response = await client.request(method, path, headers=seeded.headers, **body)
        error = assert_error(response, 401)
        assert error["code"] == "UNAUTHORIZED"
        assert "x-ratelimit-limit" in response.headers
    # Unknown paths and wrong methods of every group are 401 too (authentication comes first).
    for path in ("/v1/nope", "/api/v1/nope", "/api/v1/public/nope"):
        assert_error(await client.get(path, headers=seeded.headers), 401)
    assert_error(await client.delete("/api/v1/domains", headers=seeded.headers), 401)
