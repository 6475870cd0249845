"""Schedules fired by three `atrium worker` processes on one PostgreSQL database, one of them
SIGKILLed while firings are being written at each step of the clock: every fire time of every
schedule is recorded once and produces exactly one run (docs/decisions/0050-schedules.md).

The processes share a clock the test sets (`ATRIUM_SCHEDULE_CLOCK_FILE`); each looks for due
schedules every 0.1 s.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from tests.scaleout.conftest import Proc, Topology, bearer

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]
SCHEDULES = "/v1/schedules"
RUNS = "/api/v1/public/agent/runs"
T0 = datetime.fromisoformat("2026-01-05T08:00:00+00:00")
SCHEDULE_COUNT = 24
STEPS = 4
# Every 5 minutes, one hour per step: 12 fire times per schedule per step, all missed by more
# than the grace, all run (`run_all`, within the catch-up limit of 24).
PER_STEP = 12


async def _all_pages(http: httpx.AsyncClient, url: str, key: str, **params: str) -> list[dict]:
    found: list[dict] = []
    cursor = ""
    while True:
        response = await http.get(
            url, params={**params, "limit": "100", "cursor": cursor}, headers=bearer(key)
        )
        assert response.status_code == 200, response.text
        page = response.json()
        found += page["data"]
        if not page["has_more"]:
            return found
        cursor = page["next_cursor"]


async def _firings_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT count(*) FROM schedule_firings"))).scalar())


async def _first_firing_of_step(engine: AsyncEngine, before: int) -> None:
    """Return as soon as a firing of the step is written, so the kill that follows lands while
    the step's firings are being written rather than at a guessed moment."""
    for _ in range(6000):
        if await _firings_count(engine) > before:
            return
        await asyncio.sleep(0.005)
    raise AssertionError("no firing was written within 30 s of the clock's step")


def _set_clock(clock: Path, moment: datetime) -> None:
    """Replace the clock file whole: a worker reading it while `write_text` has truncated it
    would find it empty and fall back to the system clock, firing months of missed times."""
    staged = clock.with_suffix(".new")
    staged.write_text(moment.isoformat())
    staged.replace(clock)


async def test_three_workers_and_sigkill_fire_each_time_once(
    topology: Topology, tmp_path: Path
) -> None:
    clock = tmp_path / "clock.txt"
    _set_clock(clock, T0)
    topology.env.update(
        ATRIUM_SCHEDULE_CLOCK_FILE=str(clock),
        ATRIUM_SCHEDULE_POLL_SECONDS="0.1",
        ATRIUM_WORKER_CONCURRENCY="16",
    )
    api = topology.api()
    key = topology.new_key(tier="premium")
    database_url = topology.env["ATRIUM_DATABASE_URL"]
    async with httpx.AsyncClient(base_url=api.url, timeout=60) as http:
        made = []
        for number in range(SCHEDULE_COUNT):
            response = await http.post(
                SCHEDULES,
                json={
                    "prompt": f"report {number}",
                    "cron": "*/5 * * * *",
                    "timezone": "Europe/Berlin",
                    "on_missed": "run_all",
                    "on_overlap": "enqueue",
                },
                headers=bearer(key),
            )
            assert response.status_code == 201, response.text
            made.append(response.json()["schedule_id"])
        workers: list[Proc] = [topology.worker() for _ in range(3)]
        mid_step = 0
        rng = random.Random(40)
        engine = create_async_engine(database_url)
        try:
            for step in range(1, STEPS + 1):
                before = await _firings_count(engine)
                _set_clock(clock, T0 + timedelta(hours=step, minutes=2))
                await _first_firing_of_step(engine, before)
                victim = workers.pop(rng.randrange(len(workers)))
                victim.kill()
                at_kill = await _firings_count(engine)
                if at_kill < before + SCHEDULE_COUNT * PER_STEP:
                    mid_step += 1
                workers.append(topology.worker())
                expected = before + SCHEDULE_COUNT * PER_STEP
                for _ in range(600):
                    if await _firings_count(engine) >= expected:
                        break
                    await asyncio.sleep(0.1)
                assert await _firings_count(engine) == expected
        finally:
            await engine.dispose()

        total = SCHEDULE_COUNT * PER_STEP * STEPS
        every_run: list[str] = []
        for schedule_id in made:
            firings = await _all_pages(http, f"{SCHEDULES}/{schedule_id}/firings", key)
            assert len(firings) == PER_STEP * STEPS
            assert len({each["fire_at"] for each in firings}) == PER_STEP * STEPS
            assert {each["status"] for each in firings} == {"fired"}
            runs = await _all_pages(http, RUNS, key, schedule_id=schedule_id)
            assert sorted(run["run_id"] for run in runs) == sorted(
                each["run_id"] for each in firings
            )
            every_run += [run["run_id"] for run in runs]
        assert len(every_run) == len(set(every_run)) == total
        statuses = Counter(
            run["status"] for run in await _all_pages(http, RUNS, key) if run["run_id"]
        )
        assert sum(statuses.values()) == total
    print(f"kills that landed while a step's firings were being written: {mid_step} of {STEPS}")
    assert mid_step >= STEPS // 2
