"""`record_run_usage`: the contract the runs worker relies on, read back through HTTP."""

from __future__ import annotations

import asyncio
import datetime

import httpx
import pytest

from atrium.analytics.service import record_run_usage
from atrium.auth.service import IssuedKey
from atrium.db.engine import Database

DAY = datetime.date(2026, 3, 10)


async def _agent(client: httpx.AsyncClient, auth: dict[str, str], name: str = "a") -> str:
    response = await client.post("/v1/agents", json={"name": name}, headers=auth)
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def test_runs_add_up_per_day_and_status(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth)
    runs = [
        ("completed", 10, 20, 1_500_000, 2),
        ("failed", 1, 0, 250, 1),
        ("cancelled", 0, 0, 0, 0),
    ]
    for status, tokens_in, tokens_out, micro, requests in runs:
        async with db.transaction() as session:
            await session.run_sync(
                record_run_usage,
                account_id=api_key.account_id,
                agent_id=agent_id,
                day=DAY,
                status=status,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                credits_micro=micro,
                requests=requests,
            )
    body = (
        await client.get(
            "/v1/analytics/usage",
            params={"start_date": "2026-03-10", "end_date": "2026-03-10"},
            headers=auth,
        )
    ).json()
    expected = {
        "runs": 3,
        "completed": 1,
        "failed": 1,
        "cancelled": 1,
        "input_tokens": 11,
        "output_tokens": 20,
        "credits": 1.50025,
        "requests": 3,
        "requires_action": 0,
    }
    assert body["totals"] == expected
    assert body["daily"] == [{"date": "2026-03-10", **expected}]
    assert body["agents"] == [{"agent_id": agent_id, "name": "a", **expected}]


async def test_concurrent_increments_are_all_counted(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth)

    async def finish() -> None:
        async with db.transaction() as session:
            await session.run_sync(
                record_run_usage,
                account_id=api_key.account_id,
                agent_id=agent_id,
                day=DAY,
                status="completed",
                input_tokens=3,
                output_tokens=4,
                credits_micro=7,
                requests=1,
            )

    await asyncio.gather(*(finish() for _ in range(20)))
    totals = (
        await client.get("/v1/analytics/usage", params={"end_date": "2026-03-10"}, headers=auth)
    ).json()["totals"]
    assert (totals["runs"], totals["input_tokens"], totals["credits"]) == (20, 60, 0.00014)


async def test_a_status_that_is_not_terminal_is_refused(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth)
    async with db.transaction() as session:
        with pytest.raises(ValueError, match="status"):
            await session.run_sync(
                record_run_usage,
                account_id=api_key.account_id,
                agent_id=agent_id,
                day=DAY,
                status="running",
                input_tokens=0,
                output_tokens=0,
                credits_micro=0,
                requests=0,
            )


async def test_a_finish_time_counts_on_its_utc_day(
    client: httpx.AsyncClient, db: Database, api_key: IssuedKey, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth)
    late_evening = datetime.datetime(
        2026, 3, 10, 23, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-2))
    )
    async with db.transaction() as session:
        await session.run_sync(
            record_run_usage,
            account_id=api_key.account_id,
            agent_id=agent_id,
            day=late_evening,
            status="completed",
            input_tokens=1,
            output_tokens=1,
            credits_micro=1,
            requests=1,
        )
    daily = (
        await client.get(
            "/v1/analytics/usage",
            params={"start_date": "2026-03-10", "end_date": "2026-03-11"},
            headers=auth,
        )
    ).json()["daily"]
    assert [row["runs"] for row in daily] == [0, 1]
