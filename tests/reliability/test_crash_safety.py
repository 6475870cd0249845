"""Crash safety: SIGKILL the one `atrium serve` process while runs execute and while domains and
spaces are being written; after a restart every acknowledged write is there, no run is stuck in
`running`, and the queued runs complete. Runs on every database backend under test.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import processes
from tests.conftest import _empty_tables
from tests.processes import atrium_env
from tests.runs.helpers import RUNS
from tests.worker.processes import Servers

WORDS, PAUSE = 20, 0.1  # one run streams for about two seconds


@pytest.fixture
def slow_llm() -> Iterator[str]:
    with processes.slow_llm(pause=PAUSE, words=WORDS) as url:
        yield url


def _env(database_url: str, llm_url: str) -> dict[str, str]:
    return atrium_env(
        ATRIUM_DATABASE_URL=database_url,
        ATRIUM_BOOTSTRAP_KEY="atr_" + secrets.token_urlsafe(32),
        ATRIUM_RATE_LIMIT_STANDARD="1000000/hour",
        ATRIUM_LLM_BASE_URL=llm_url,
        ATRIUM_WORKER_CONCURRENCY="2",  # most runs wait in the queue when the process dies
        ATRIUM_RUN_LEASE_SECONDS="1.5",
        ATRIUM_RUN_HEARTBEAT_SECONDS="0.5",
        ATRIUM_RUN_POLL_SECONDS="0.5",
        PYTHONUNBUFFERED="1",
    )


class Writer:
    """Writes domains and spaces as fast as it can; remembers every acknowledged one."""

    def __init__(self, api: httpx.AsyncClient) -> None:
        self.api = api
        self.domains: dict[int, str] = {}
        self.spaces: dict[int, str] = {}
        self.failures = 0

    async def run(self, stop: asyncio.Event) -> None:
        number = 0
        while not stop.is_set() and number < 5000:
            number += 1
            name = f"crash-{number}.example.com"
            try:
                domain = await self.api.post("/api/v1/domains", data={"name": name})
                space = await self.api.post("/api/v1/spaces", data={"name": f"crash {number}"})
            except httpx.TransportError:  # the process died under this request
                self.failures += 1
                return
            if domain.status_code == 201:
                self.domains[domain.json()["data"]["id"]] = name
            if space.status_code == 201:
                self.spaces[space.json()["data"]["id"]] = f"crash {number}"


async def _statuses(api: httpx.AsyncClient, run_ids: list[str]) -> dict[str, Any]:
    return {run_id: (await api.get(f"{RUNS}/{run_id}")).json() for run_id in run_ids}


async def test_sigkill_loses_no_acknowledged_write_and_strands_no_run(
    tmp_path: Path, database_url: str, slow_llm: str
) -> None:
    await _empty_tables(database_url)
    env = _env(database_url, slow_llm)
    with Servers(tmp_path, env) as servers:
        first = await servers.serve("first")
        async with servers.api(first) as api:
            agent = await api.post(
                "/v1/agents",
                json={"name": "slow", "config": {"model": "openai-compatible:slow", "tools": []}},
            )
            assert agent.status_code == 201, agent.text
            agent_id = agent.json()["agent_id"]
            run_ids = []
            for index in range(6):
                created = await api.post(
                    RUNS, json={"prompt": f"crash test {index}", "agent_id": agent_id}
                )
                assert created.status_code == 201, created.text
                run_ids.append(created.json()["run_id"])

            writer = Writer(api)
            stop = asyncio.Event()
            writing = asyncio.create_task(writer.run(stop))
            loop = asyncio.get_running_loop()
            written_for_a_while = loop.time() + 0.5
            # Kill once the writer has written for a while, with writes acknowledged, and two
            # runs are mid-execution, all seen in the same look. Not on one look after a fixed
            # pause: on a loaded machine the writer's first answer came later than that, or
            # the look fell between one run's end and the next one's start.
            deadline = loop.time() + 60
            while True:
                before_kill = await _statuses(api, run_ids)
                running = [s["status"] for s in before_kill.values()].count("running")
                ready = running == 2 and bool(writer.domains) and loop.time() >= written_for_a_while
                if ready or loop.time() > deadline:
                    break
                await asyncio.sleep(0.05)
            assert running == 2, [s["status"] for s in before_kill.values()]
            assert len(writer.domains) > 0
            first.kill()  # SIGKILL while the writer's requests are in flight
            stop.set()
            await writing

        second = await servers.serve("second")
        async with servers.api(second) as api:
            # Every acknowledged write survived, with what was acknowledged.
            for domain_id, name in writer.domains.items():
                found = await api.get(f"/api/v1/domains/{domain_id}")
                assert found.status_code == 200, (domain_id, found.text)
                assert found.json()["data"]["name"] == name
            for space_id, name in writer.spaces.items():
                found = await api.get(f"/api/v1/spaces/{space_id}")
                assert found.status_code == 200, (space_id, found.text)
                assert found.json()["data"]["name"] == name
            # No run is stuck: the interrupted ones are re-queued, all of them complete.
            statuses: dict[str, Any] = {}
            for _ in range(600):
                statuses = await _statuses(api, run_ids)
                if all(
                    s["status"] in {"completed", "failed", "cancelled"} for s in statuses.values()
                ):
                    break
                await asyncio.sleep(0.1)
            assert {s["status"] for s in statuses.values()} == {"completed"}, [
                (s["status"], s.get("error")) for s in statuses.values()
            ]
            expected = " ".join(f"word{i}" for i in range(1, WORDS + 1))
            assert all(s["result"] == expected for s in statuses.values())
            listed = (await api.get(RUNS, params={"limit": 100})).json()["data"]
            assert sorted(run["run_id"] for run in listed) == sorted(run_ids)
