"""Two API processes and two workers on PostgreSQL + Redis, driven over HTTP
(docs/design.md#processes)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter

import httpx
import pytest
from httpx_sse import aconnect_sse

from tests.scaleout.conftest import Topology, bearer, read_events

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]
RUNS = "/api/v1/public/agent/runs"


async def create_run(
    http: httpx.AsyncClient, base: str, key: str, prompt: str, agent_id: str | None = None
) -> str:
    """Create a run as a careful client does: an Idempotency-Key, so a retry after a dropped
    connection can never make a second run."""
    body: dict[str, str] = {"prompt": prompt}
    if agent_id:
        body["agent_id"] = agent_id
    headers = {**bearer(key), "Idempotency-Key": secrets.token_hex(16)}
    for attempt in range(3):
        try:
            response = await http.post(base + RUNS, json=body, headers=headers)
            break
        except httpx.TransportError:
            if attempt == 2:
                raise
    assert response.status_code == 201, response.text
    return str(response.json()["run_id"])


async def slow_agent(http: httpx.AsyncClient, base: str, key: str) -> str:
    response = await http.post(
        base + "/v1/agents",
        json={"name": "slow", "config": {"model": "openai-compatible:slow", "tools": []}},
        headers=bearer(key),
    )
    assert response.status_code == 201, response.text
    return str(response.json()["agent_id"])


async def wait_status(
    http: httpx.AsyncClient, base: str, key: str, run_id: str, wanted: set[str], within: float
) -> dict[str, object]:
    deadline = time.monotonic() + within
    while True:
        run: dict[str, object] = (
            await http.get(f"{base}{RUNS}/{run_id}", headers=bearer(key))
        ).json()
        if run["status"] in wanted:
            return run
        assert time.monotonic() < deadline, f"{run_id} stuck in {run['status']}"
        await asyncio.sleep(0.1)


async def test_300_runs_across_two_apis_complete_exactly_once(topology: Topology) -> None:
    apis = [topology.api(), topology.api()]
    topology.worker()
    topology.worker()
    key = topology.new_key(tier="premium")
    # Idle connections expire before uvicorn's 5 s keep-alive, so none is reused as it closes.
    limits = httpx.Limits(max_connections=100, keepalive_expiry=1)
    async with httpx.AsyncClient(timeout=60, limits=limits) as http:
        created = await asyncio.gather(
            *(create_run(http, apis[i % 2].url, key, f"task {i}") for i in range(300))
        )
        assert len(set(created)) == 300
        started = time.monotonic()
        gate = asyncio.Semaphore(50)

        async def follow(index: int, run_id: str) -> list[tuple[int, str]]:
            other = apis[(index + 1) % 2].url  # stream from the process that did NOT create it
            seen: list[tuple[int, str]] = []
            async with gate:
                for _ in range(3):  # a dropped stream is resumed, as clients do
                    try:
                        await read_events(
                            http,
                            f"{other}{RUNS}/{run_id}/events",
                            key,
                            after=seen[-1][0] if seen else None,
                            into=seen,
                        )
                        break
                    except httpx.TransportError:
                        continue
            return seen

        streams = await asyncio.gather(*(follow(i, r) for i, r in enumerate(created)))
        print(f"300 runs followed to the end in {time.monotonic() - started:.1f} s")
        for run_id, events in zip(created, streams, strict=True):
            kinds = Counter(kind for _, kind in events)
            assert kinds["run.completed"] == 1, (run_id, events)
            assert kinds["run.started"] == 1, f"{run_id} ran twice: {events}"
            ids = [event_id for event_id, _ in events]
            assert ids == list(range(1, len(ids) + 1)), (run_id, events)
            assert events[-1][1] == "run.completed"
        listing = await http.get(
            apis[0].url + RUNS, params={"status": "completed", "limit": 100}, headers=bearer(key)
        )
        assert listing.status_code == 200


async def test_a_killed_workers_runs_finish_on_the_other_worker(topology: Topology) -> None:
    fast_lease = {"ATRIUM_RUN_LEASE_SECONDS": "2", "ATRIUM_RUN_HEARTBEAT_SECONDS": "0.5"}
    api = topology.api()
    doomed = topology.worker(**fast_lease)
    key = topology.new_key()
    async with httpx.AsyncClient(timeout=60) as http:
        agent = await slow_agent(http, api.url, key)
        runs = [await create_run(http, api.url, key, f"slow {i}", agent) for i in range(4)]
        for run_id in runs:
            await wait_status(http, api.url, key, run_id, {"running"}, within=20)
        topology.worker(**fast_lease)  # the survivor, started after the doomed one claimed all
        doomed.kill()
        for run_id in runs:
            run = await wait_status(
                http, api.url, key, run_id, {"completed", "failed", "cancelled"}, within=60
            )
            assert run["status"] == "completed", run
            assert run["result"] == " ".join(f"word{i}" for i in range(1, 31))
            events = await read_events(http, f"{api.url}{RUNS}/{run_id}/events", key)
            kinds = Counter(kind for _, kind in events)
            assert kinds["run.started"] == 2, events  # the lost attempt, then the finished one
            assert kinds["run.completed"] == 1
        usage = await http.get(api.url + "/v1/analytics/usage", headers=bearer(key))
        assert usage.json()["totals"]["completed"] == 4, usage.text


async def test_a_stream_resumes_on_the_other_api_after_a_crash(topology: Topology) -> None:
    doomed, survivor = topology.api(), topology.api()
    topology.worker()
    key = topology.new_key()
    async with httpx.AsyncClient(timeout=60) as http:
        agent = await slow_agent(http, survivor.url, key)
        run_id = await create_run(http, survivor.url, key, "stream me", agent)
        before: list[tuple[int, str]] = []
        try:
            async with aconnect_sse(
                http, "GET", f"{doomed.url}{RUNS}/{run_id}/events", headers=bearer(key)
            ) as source:
                async for frame in source.aiter_sse():
                    if frame.id and frame.data:
                        before.append((int(frame.id), frame.event))
                    if len(before) == 5:
                        doomed.kill()
        except httpx.TransportError:
            pass  # the connection died with the process, as it would for a client
        assert len(before) >= 5 and before[-1][1] != "run.completed"
        after = await read_events(
            http, f"{survivor.url}{RUNS}/{run_id}/events", key, after=before[-1][0]
        )
        ids = [event_id for event_id, _ in before + after]
        assert ids == list(range(1, len(ids) + 1)), ids
        assert (before + after)[-1][1] == "run.completed"


async def test_rate_limits_are_exact_across_api_processes(topology: Topology) -> None:
    apis = [topology.api(), topology.api()]
    key = topology.new_key()
    gate = asyncio.Semaphore(25)
    async with httpx.AsyncClient(timeout=30) as http:

        async def one(index: int) -> int:
            async with gate:
                response = await http.get(apis[index % 2].url + "/v1/account", headers=bearer(key))
                return response.status_code

        statuses = await asyncio.gather(*(one(i) for i in range(1000)))
        assert Counter(statuses) == {200: 1000}
        for api in apis:
            refused = await http.get(api.url + "/v1/account", headers=bearer(key))
            assert refused.status_code == 429
            assert refused.headers["x-ratelimit-remaining"] == "0"
