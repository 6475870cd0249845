"""Expired memory items deleted by the process's purge loop (`atrium.memory.expiry`): only
expired rows go, of every account, in batches; their history stays."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import func, select

from atrium.auth.service import IssuedKey
from atrium.db.engine import Database
from atrium.db.models import MemoryItem
from atrium.kit.time import utcnow
from atrium.memory import expiry
from tests.conftest import KeyFactory, bearer

ITEMS = "/v1/memory/items"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    # The app's own loop waits a day before its first round: the counts below are this test's.
    return {"memory_purge_seconds": 86_400}


async def _count(db: Database, account_id: int) -> int:
    async with db.session(write=False) as session:
        found = await session.scalar(
            select(func.count()).select_from(MemoryItem).where(MemoryItem.account_id == account_id)
        )
        return int(found or 0)


async def test_purge_deletes_only_expired_items_of_every_account(
    client: httpx.AsyncClient,
    db: Database,
    api_key: IssuedKey,
    make_key: KeyFactory,
) -> None:
    other = await make_key()
    for key, ttl in (("brief", 1), ("kept", None), ("later", 3600)):
        body = {"namespace": ["scratch"], "key": key, "value": key, "ttl_seconds": ttl}
        for issued in (api_key, other):
            response = await client.put(ITEMS, json=body, headers=bearer(issued.key))
            assert response.status_code == 200, response.text
    brief = (
        await client.get(
            f"{ITEMS}/by-key",
            params={"namespace": "scratch", "key": "brief"},
            headers=bearer(api_key.key),
        )
    ).json()
    assert await expiry.purge_expired(db, now=utcnow()) == 0
    await asyncio.sleep(1.1)
    assert await expiry.purge_expired(db, now=utcnow()) == 2
    assert await _count(db, api_key.account_id) == 2
    assert await _count(db, other.account_id) == 2
    history = await client.get(f"{ITEMS}/{brief['item_id']}/history", headers=bearer(api_key.key))
    assert history.status_code == 200 and len(history.json()["data"]) == 1
    # Past every expiry: batch after batch until none is left.
    later = utcnow() + timedelta(hours=2)
    assert await expiry.purge_expired(db, now=later) == 2
    assert await _count(db, api_key.account_id) == 1


async def test_purge_runs_in_batches(
    db: Database,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for index in range(5):
        body = {"namespace": ["many"], "key": f"k{index}", "value": index, "ttl_seconds": 60}
        assert (await client.put(ITEMS, json=body, headers=auth)).status_code == 200
    monkeypatch.setattr(expiry, "PURGE_BATCH", 2)
    assert await expiry.purge_expired(db, now=utcnow() + timedelta(minutes=2)) == 5


@pytest.mark.parametrize("settings_overrides", [{"memory_purge_seconds": 0.2}])
async def test_the_apps_own_loop_deletes_expired_items(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey
) -> None:
    for key, ttl in (("brief", 1), ("kept", None)):
        body = {"namespace": ["scratch"], "key": key, "value": key, "ttl_seconds": ttl}
        response = await client.put(ITEMS, json=body, headers=bearer(api_key.key))
        assert response.status_code == 200, response.text
    assert await _count(db, api_key.account_id) == 2
    deadline = asyncio.get_running_loop().time() + 10
    while await _count(db, api_key.account_id) == 2:
        assert asyncio.get_running_loop().time() < deadline, "the expired item is still there"
        await asyncio.sleep(0.1)
    assert await _count(db, api_key.account_id) == 1
