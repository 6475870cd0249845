"""Bearer authentication: every failure is a 401 with the one error body and rate headers."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select

from atrium.auth.service import IssuedKey, revoke_key
from atrium.db.engine import Database
from atrium.db.models import ApiKey
from tests.conftest import bearer

GROUP_PATHS = ["/v1/account", "/api/v1/domains", "/api/v1/public/agent/runs"]


def assert_unauthorized(response: httpx.Response) -> None:
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert set(response.json()) == {"error"}
    assert set(response.json()["error"]) == {"code", "message", "details"}
    for name in ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"):
        assert name in response.headers


@pytest.mark.parametrize("path", GROUP_PATHS)
async def test_missing_key_is_401(client: httpx.AsyncClient, path: str) -> None:
    assert_unauthorized(await client.get(path))


@pytest.mark.parametrize(
    "header",
    [
        "Bearer atr_this-key-does-not-exist-anywhere-at-all",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "atr_no-scheme",
        "Bearer not-even-our-format",
        "Bearer " + "atr_" + "x" * 500,
    ],
)
async def test_wrong_or_malformed_key_is_401(client: httpx.AsyncClient, header: str) -> None:
    assert_unauthorized(await client.get("/v1/account", headers={"Authorization": header}))


async def test_valid_key_acts_for_its_account(
    client: httpx.AsyncClient, api_key: IssuedKey
) -> None:
    response = await client.get("/v1/account", headers=bearer(api_key.key))
    assert response.status_code == 200
    assert response.json() == {
        "account": {"id": api_key.account_id, "name": api_key.account_name},
        "key": {"id": api_key.key_id, "tier": "standard"},
    }


async def test_revoked_key_is_401_everywhere(
    client: httpx.AsyncClient, api_key: IssuedKey, db: Database
) -> None:
    assert (await client.get("/v1/account", headers=bearer(api_key.key))).status_code == 200
    async with db.transaction() as session:
        await revoke_key(session, key_id=api_key.key_id)
    for path in GROUP_PATHS:
        assert_unauthorized(await client.get(path, headers=bearer(api_key.key)))


async def test_unknown_path_under_a_group_is_404_once_authenticated(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.get("/v1/no-such-thing", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


async def test_keys_are_stored_only_as_hashes(make_key: object, db: Database) -> None:
    issued: IssuedKey = await make_key()  # type: ignore[operator]
    async with db.session(write=False) as session:
        rows = (await session.scalars(select(ApiKey))).all()
    stored = " ".join(f"{row.prefix} {row.key_hash}" for row in rows)
    assert issued.key not in stored
    assert issued.key[len(rows[0].prefix) :] not in stored
    assert len(rows[0].key_hash) == 64
