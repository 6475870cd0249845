"""`resolve_agent_for_run`: the contract the runs worker relies on."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from atrium.agents.service import resolve_agent_for_run
from atrium.auth.service import IssuedKey
from atrium.db.engine import Database
from atrium.errors import NotFound
from tests.conftest import KeyFactory, bearer


async def test_no_agent_id_creates_the_default_agent_once(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    assert (await client.get("/v1/agents", headers=auth)).json() == {"data": []}
    async with db.transaction() as session:
        first = await resolve_agent_for_run(session, account_id=api_key.account_id, agent_id=None)
    async with db.transaction() as session:
        again = await resolve_agent_for_run(session, account_id=api_key.account_id, agent_id=None)
    assert again.id == first.id
    listed = (await client.get("/v1/agents", headers=auth)).json()["data"]
    assert [agent["agent_id"] for agent in listed] == [first.id]
    assert listed[0]["config"]["model"] == "atrium:offline"


async def test_concurrent_first_runs_share_one_default_agent(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    async def resolve() -> str:
        async with db.transaction() as session:
            agent = await resolve_agent_for_run(
                session, account_id=api_key.account_id, agent_id=None
            )
            return agent.id

    ids = await asyncio.gather(*(resolve() for _ in range(5)))
    assert len(set(ids)) == 1
    assert len((await client.get("/v1/agents", headers=auth)).json()["data"]) == 1


async def test_a_deleted_default_agent_is_replaced_on_demand(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    async with db.transaction() as session:
        first = await resolve_agent_for_run(session, account_id=api_key.account_id, agent_id=None)
    assert (await client.delete(f"/v1/agents/{first.id}", headers=auth)).status_code == 200
    async with db.transaction() as session:
        second = await resolve_agent_for_run(session, account_id=api_key.account_id, agent_id=None)
    assert second.id != first.id


async def test_named_agent_is_returned(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    created = await client.post("/v1/agents", json={"name": "Writer"}, headers=auth)
    agent_id = created.json()["agent_id"]
    async with db.transaction() as session:
        agent = await resolve_agent_for_run(
            session, account_id=api_key.account_id, agent_id=agent_id
        )
    assert (agent.id, agent.name) == (agent_id, "Writer")


@pytest.mark.parametrize("case", ["unknown", "deleted", "foreign"])
async def test_unknown_deleted_or_foreign_agent_is_not_found(
    client: httpx.AsyncClient,
    db: Database,
    api_key: IssuedKey,
    auth: dict[str, str],
    make_key: KeyFactory,
    case: str,
) -> None:
    agent_id = "agt_doesnotexist"
    if case != "unknown":
        owner = bearer((await make_key()).key) if case == "foreign" else auth
        agent_id = (await client.post("/v1/agents", json={"name": "x"}, headers=owner)).json()[
            "agent_id"
        ]
        if case == "deleted":
            await client.delete(f"/v1/agents/{agent_id}", headers=auth)
    async with db.transaction() as session:
        with pytest.raises(NotFound) as raised:
            await resolve_agent_for_run(session, account_id=api_key.account_id, agent_id=agent_id)
    assert raised.value.details == {"parameter": "agent_id"}
