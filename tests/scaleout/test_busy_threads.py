"""`if_busy` raced across two API processes on one PostgreSQL database (docs/guide/threads.md):
a reject never lets two prompts through, and interrupts never leave two runs of a thread
running at once."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import httpx
import pytest

from tests.scaleout.conftest import Topology, bearer
from tests.scaleout.test_topology import RUNS, slow_agent, wait_status

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]
DONE = {"completed", "failed", "cancelled"}


async def _post(
    http: httpx.AsyncClient, base: str, key: str, body: dict[str, Any]
) -> httpx.Response:
    return await http.post(base + RUNS, json=body, headers=bearer(key))


async def _thread_runs(
    http: httpx.AsyncClient, base: str, key: str, thread_id: str
) -> list[dict[str, Any]]:
    response = await http.get(
        base + RUNS, params={"thread_id": thread_id, "limit": 100}, headers=bearer(key)
    )
    assert response.status_code == 200, response.text
    return list(reversed(response.json()["data"]))


async def test_two_apis_racing_on_one_thread(topology: Topology) -> None:
    apis = [topology.api(), topology.api()]
    topology.worker()
    key = topology.new_key(tier="premium")
    async with httpx.AsyncClient(timeout=60) as http:
        agent = await slow_agent(http, apis[0].url, key)
        first = await _post(http, apis[0].url, key, {"prompt": "essay 0", "agent_id": agent})
        assert first.status_code == 201, first.text
        thread_id, first_id = first.json()["thread_id"], first.json()["run_id"]
        await wait_status(http, apis[0].url, key, first_id, {"running"}, within=30)
        body = {"thread_id": thread_id, "agent_id": agent}

        # Busy: every reject, from either process, is refused.
        rejected = await asyncio.gather(
            *(
                _post(http, apis[i % 2].url, key, {**body, "prompt": f"r{i}", "if_busy": "reject"})
                for i in range(20)
            )
        )
        assert {response.status_code for response in rejected} == {409}
        assert {response.json()["error"]["code"] for response in rejected} == {"THREAD_BUSY"}

        # Interrupts from both processes: each cancels what was decided before it.
        interrupts = await asyncio.gather(
            *(
                _post(
                    http, apis[i % 2].url, key, {**body, "prompt": f"i{i}", "if_busy": "interrupt"}
                )
                for i in range(10)
            )
        )
        assert [response.status_code for response in interrupts] == [201] * 10
        for run_id in [first_id, *(response.json()["run_id"] for response in interrupts)]:
            await wait_status(http, apis[1].url, key, run_id, DONE, within=60)
        runs = await _thread_runs(http, apis[0].url, key, thread_id)
        assert len(runs) == 11
        assert [run["status"] for run in runs] == ["cancelled"] * 10 + ["completed"]
        assert {run.get("cancel_reason") for run in runs[:-1]} == {"interrupt"}
        spans = sorted((run["started_at"], run["finished_at"]) for run in runs if run["started_at"])
        for (_, ended), (started, _) in itertools.pairwise(spans):
            assert ended <= started, spans

        # Idle again: of twenty rejects at once, from both processes, exactly one goes through.
        raced = await asyncio.gather(
            *(
                _post(http, apis[i % 2].url, key, {**body, "prompt": f"q{i}", "if_busy": "reject"})
                for i in range(20)
            )
        )
        assert sorted(response.status_code for response in raced) == [201] + [409] * 19
        (through,) = [
            response.json()["run_id"] for response in raced if response.status_code == 201
        ]
        done = await wait_status(http, apis[0].url, key, through, DONE, within=60)
        assert done["status"] == "completed"
        assert len(await _thread_runs(http, apis[1].url, key, thread_id)) == 12
