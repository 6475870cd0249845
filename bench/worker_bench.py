"""The worker side of a run alone: CPU per run of an `atrium worker` process draining a burst.

`atrium serve --no-worker` (the API) and one `atrium worker` share a fresh SQLite file (or,
with `--postgres`, a fresh PostgreSQL database). After a warm-up burst, `--runs` runs are
created through the API at once (no follower: nothing on the API side but the creates) and
the worker executes them: the claim, building each run's agent, pydantic-ai's loop and its
events, the recorder's checkpoints, the terminal transaction (usage, webhook outbox) and the
publishing of events. Printed: the worker process's CPU per run (its own counters, psutil),
in ms and in calibrations (`sum(range(10**6))` CPU time, taken in the same minute), and the
worker's runs/s (first start to last finish, server timestamps).

The figure isolates what a streaming burst spends in the worker from the HTTP side (creates,
SSE followers, polls), which shares the process under `atrium serve`. `--offline` uses the
built-in model; otherwise `slow_llm.py` streams `--chunks` chunks over `--latency` seconds.
`--profile FILE` samples the worker with py-spy during the burst and prints the shares.

    .venv/bin/python bench/worker_bench.py --offline --runs 500
    .venv/bin/python bench/worker_bench.py --runs 500 --profile /tmp/worker.txt
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from harness import (
    ATRIUM,
    RUNS,
    Meter,
    bench_agent,
    calibration_ms,
    migrate_and_key,
    new_idempotency_key,
    profile_summary,
    py_spy,
    slow_llm,
    sqlite_env,
    stamp,
    stop,
    wait_until_healthy,
)
from runs_bench import runs_of


@contextlib.contextmanager
def _processes(settings: dict[str, str]) -> Iterator[tuple[str, str, int]]:
    """The API (`serve --no-worker`) and one worker on a fresh SQLite file: (url, key, the
    worker's pid)."""
    workdir, port, env = sqlite_env("atrium-worker-bench-", settings)
    key = migrate_and_key(env)
    url = f"http://127.0.0.1:{port}"
    with (
        (workdir / "api.log").open("w") as api_log,
        (workdir / "worker.log").open("w") as worker_log,
    ):
        api = subprocess.Popen(
            [ATRIUM, "serve", "--no-worker", "--port", str(port)],
            env=env,
            stdout=api_log,
            stderr=subprocess.STDOUT,
        )
        worker = subprocess.Popen(
            [ATRIUM, "worker"], env=env, stdout=worker_log, stderr=subprocess.STDOUT
        )
        try:
            wait_until_healthy(api, url, workdir / "api.log")
            yield url, key, worker.pid
        finally:
            stop(worker)
            stop(api)


async def _create(http: httpx.AsyncClient, agent_id: str, index: int) -> str:
    for _attempt in range(20):
        try:
            response = await http.post(
                RUNS,
                json={"prompt": f"burst {index}", "agent_id": agent_id},
                headers=new_idempotency_key(),
            )
        except httpx.TransportError:
            continue
        if response.status_code in (408, 429, 503):
            await asyncio.sleep(float(response.headers.get("Retry-After", "0.5")))
            continue
        response.raise_for_status()
        run_id: str = response.json()["run_id"]
        return run_id
    raise RuntimeError("create refused 20 times")


async def _drained(http: httpx.AsyncClient, run_ids: list[str]) -> list[dict[str, object]]:
    """Poll until every run finished (once a second: the poll is the API's CPU, not the
    worker's); the runs."""
    while True:
        runs = await runs_of(http, run_ids)
        if len(runs) == len(run_ids) and all(run["finished_at"] for run in runs):
            return runs
        await asyncio.sleep(1.0)


async def _burst(url: str, key: str, worker: int, args: argparse.Namespace) -> None:
    meter = Meter(worker)
    limits = httpx.Limits(max_connections=200, max_keepalive_connections=None)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=300, limits=limits) as http:
        model = "atrium:offline" if args.offline else "openai-compatible:bench"
        agent_id = await bench_agent(http, model)
        warm = await asyncio.gather(*(_create(http, agent_id, i) for i in range(args.warmup)))
        await _drained(http, list(warm))
        await asyncio.sleep(1)
        calibration = calibration_ms()
        before = meter.cpu_seconds()
        with py_spy(worker, args.profile):
            run_ids = await asyncio.gather(*(_create(http, agent_id, i) for i in range(args.runs)))
            runs = await _drained(http, list(run_ids))
            spent = meter.cpu_seconds() - before
        calibration = min(calibration, calibration_ms())
    completed = sum(run["status"] == "completed" for run in runs)
    first = min(stamp(str(run["started_at"])) for run in runs)
    last = max(stamp(str(run["finished_at"])) for run in runs)
    per_run = spent / args.runs * 1000
    model = "atrium:offline" if args.offline else f"{args.latency:g} s model, {args.chunks} chunks"
    print(f"== worker draining {args.runs} runs ({model}) ==")
    print(f"calibration: sum(range(10**6)) = {calibration:.1f} ms of CPU (same minute)")
    print(
        f"worker CPU: {spent:.2f} s = {per_run:.2f} ms per run = "
        f"{per_run / calibration:.3f} calibrations per run (load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"worker, first start to last finish: {last - first:.2f} s = "
        f"{len(runs) / (last - first):.1f} runs/s; completed {completed} of {len(runs)}; "
        f"peak RSS {meter.peak_rss_mb():.0f} MB",
        flush=True,
    )
    if args.profile:
        print(profile_summary(args.profile))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=500, help="runs created at once (500)")
    parser.add_argument("--offline", action="store_true", help="the atrium:offline model")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per answer (2)")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per answer (20)")
    parser.add_argument("--warmup", type=int, default=20, help="runs before measuring (20)")
    parser.add_argument("--profile", type=Path, help="py-spy the worker into this file")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting other than its default (name without ATRIUM_)",
    )
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    with contextlib.ExitStack() as stack:
        if not args.offline:
            settings.setdefault(
                "llm_base_url",
                stack.enter_context(slow_llm(latency=args.latency, chunks=args.chunks)),
            )
        url, key, worker = stack.enter_context(_processes(settings))
        started = time.perf_counter()
        asyncio.run(_burst(url, key, worker, args))
    print(f"load average after: {os.getloadavg()} ({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
