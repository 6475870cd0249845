"""After a random workload, every number of the report equals a recount of the raw runs."""

from __future__ import annotations

import asyncio
import datetime
import random
from collections.abc import Iterable
from typing import Any

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.analytics.conftest import FinishedRun, Recorder

FIRST_DAY = datetime.date(2026, 1, 1)
STATUSES = ("completed", "failed", "cancelled")


def _recount(runs: Iterable[FinishedRun]) -> dict[str, Any]:
    listed = list(runs)
    return {
        "runs": len(listed),
        **{status: sum(run.status == status for run in listed) for status in STATUSES},
        "input_tokens": sum(run.input_tokens for run in listed),
        "output_tokens": sum(run.output_tokens for run in listed),
        "credits": sum(run.credits_micro for run in listed) / 1_000_000,
        "requests": sum(run.requests for run in listed),
        "requires_action": 0,
    }


@pytest.mark.parametrize("seed", [1, 2])
async def test_report_equals_a_recount_of_the_runs(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    api_key: IssuedKey,
    record: Recorder,
    seed: int,
) -> None:
    rng = random.Random(seed)
    names = [f"agent-{n}" for n in range(4)]
    agents = {}
    for name in names:
        response = await client.post("/v1/agents", json={"name": name}, headers=auth)
        agents[response.json()["agent_id"]] = name

    async def finish_one() -> FinishedRun:
        return await record(
            account_id=api_key.account_id,
            agent_id=rng.choice(list(agents)),
            day=FIRST_DAY + datetime.timedelta(days=rng.randrange(20)),
            status=rng.choice(STATUSES),
            input_tokens=rng.randrange(5_000),
            output_tokens=rng.randrange(5_000),
            credits_micro=rng.randrange(3_000_000),
            requests=rng.randrange(6),
        )

    # Concurrent writers, as several workers finishing runs at once.
    runs = list(await asyncio.gather(*(finish_one() for _ in range(150))))
    deleted = next(iter(agents))
    await client.delete(f"/v1/agents/{deleted}", headers=auth)

    for _ in range(4):
        start = FIRST_DAY + datetime.timedelta(days=rng.randrange(-3, 20))
        end = start + datetime.timedelta(days=rng.randrange(0, 15))
        in_range = [run for run in runs if start <= run.day <= end]
        response = await client.get(
            "/v1/analytics/usage",
            params={"start_date": start.isoformat(), "end_date": end.isoformat()},
            headers=auth,
        )
        body = response.json()
        assert body["totals"] == _recount(in_range)
        days = [start + datetime.timedelta(days=n) for n in range((end - start).days + 1)]
        assert body["daily"] == [
            {"date": day.isoformat(), **_recount(r for r in in_range if r.day == day)}
            for day in days
        ]
        expected_agents = [
            {
                "agent_id": agent_id,
                "name": name,
                **_recount(r for r in in_range if r.agent_id == agent_id),
            }
            for agent_id, name in agents.items()
            if agent_id != deleted or any(r.agent_id == deleted for r in in_range)
        ]
        assert body["agents"] == expected_agents

        agent_id = rng.choice(list(agents))
        one = await client.get(
            "/v1/analytics/usage",
            params={
                "start_date": start.isoformat(),
                "end_date": end.isoformat(),
                "agent_id": agent_id,
            },
            headers=auth,
        )
        assert one.json()["totals"] == _recount(r for r in in_range if r.agent_id == agent_id)
