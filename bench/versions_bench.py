"""What naming a version costs a run's creation: `agt_…`, `agt_…@2` and `agt_…@prod` (an
alias with a split).

1. end to end: run creations against a real `atrium serve` on loopback (SQLite, no worker:
   only the create is measured); rounds alternate the three forms so they share the minutes;
2. the lookup alone: the point reads that find the agent and its config (`run_agent` for a
   plain id, `agent_at` for the others) in this process, on the server's SQLite file, CPU
   time per call.

    .venv/bin/python bench/versions_bench.py --rounds 5 --per-round 200
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx
from harness import atrium_serve, bench_agent, calibration_ms, percentile

RUNS = "/api/v1/public/agent/runs"


async def _creates(http: httpx.AsyncClient, agent: str, count: int) -> list[float]:
    took = []
    for index in range(count):
        started = time.perf_counter()
        response = await http.post(RUNS, json={"prompt": f"p{index}", "agent_id": agent})
        took.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
    return took


async def _lookups(database_url: str, account_id: int, agent: str, count: int) -> None:
    from atrium.agents.repository import run_agent
    from atrium.agents.versions.resolve import agent_at
    from atrium.db.engine import Database
    from atrium.settings import Settings

    db = Database(Settings(_env_file=None, database_url=database_url))  # type: ignore[call-arg]
    try:
        forms = {
            "plain": lambda: run_agent(db, account_id=account_id, agent_id=agent),
            "@2": lambda: agent_at(db, account_id=account_id, reference=f"{agent}@2", run_id="r"),
            "@prod": lambda: agent_at(
                db, account_id=account_id, reference=f"{agent}@prod", run_id="r"
            ),
        }
        for name, lookup in forms.items():
            for _ in range(100):
                await lookup()
            started = time.process_time()
            for _ in range(count):
                await lookup()
            each = (time.process_time() - started) / count * 1e6
            print(f"lookup {name}: {each:.0f} µs CPU per call (n={count})")
    finally:
        await db.dispose()


async def main(args: argparse.Namespace) -> None:
    with atrium_serve(settings={"run_worker": "false"}) as server:
        headers = {"Authorization": f"Bearer {server.key}"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as http:
            agent = await bench_agent(http, "atrium:offline")
            await http.put(f"/v1/agents/{agent}", json={"config": {"instructions": "v2"}})
            split = {"version": 1, "split": {"version": 2, "weight": 0.2}}
            await http.put(f"/v1/agents/{agent}/aliases/prod", json=split)
            forms = {"plain": agent, "@2": f"{agent}@2", "@prod": f"{agent}@prod"}
            account_id = (await http.get("/v1/account")).json()["account"]["id"]
            await _creates(http, agent, 50)  # warm-up
            times: dict[str, list[float]] = {name: [] for name in forms}
            for _ in range(args.rounds):
                for name, reference in forms.items():
                    times[name] += await _creates(http, reference, args.per_round)
        database_url = f"sqlite+aiosqlite:///{server.workdir / 'atrium.db'}"
        await _lookups(database_url, account_id, agent, args.lookups)
    calibration = calibration_ms()
    for name, values in times.items():
        print(
            f"create {name}: n={len(values)} mean={statistics.fmean(values):.2f} ms "
            f"p50={percentile(values, 0.5):.2f} ms p99={percentile(values, 0.99):.2f} ms "
            f"(calibration {calibration:.1f} ms)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=200)
    parser.add_argument("--lookups", type=int, default=5000)
    asyncio.run(main(parser.parse_args()))
