"""Scale-out benchmark on PostgreSQL + Redis: runs/s with 1 worker process vs 2, and single-run
create → completed latency, each against one `atrium serve --no-worker` API process.

Each configuration gets a fresh PostgreSQL database and two measurements:
- drain: `--drain` runs are queued while no worker runs, then the worker process(es) start;
  runs/s = runs / (first start → last finish, server timestamps). This is the workers' own
  throughput, the figure that scales with worker processes;
- end to end: `bench/runs_bench.py` (`--url` mode: single-run latency, a burst submitted at
  once), where the one API process creating the runs and this client share the machine with
  the workers, so the figures compare directly with the SQLite ones.

    .venv/bin/python bench/scaleout_bench.py
    .venv/bin/python bench/scaleout_bench.py --burst 1000 --single 200 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

# runs_bench: this folder (a script's own directory is on its path)
from harness import calibration_ms, free_port, migrate_and_key, postgres_admin, stamp
from runs_bench import runs_of, wait_drained

HERE = Path(__file__).parent
ATRIUM = str(Path(sys.executable).with_name("atrium"))
RUNS = "/api/v1/public/agent/runs"


def _run(server: str, redis: str, workers: int, args: argparse.Namespace) -> None:
    name = f"atrium_bench_scaleout_{secrets.token_hex(3)}"
    asyncio.run(postgres_admin(server, f'CREATE DATABASE "{name}"'))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(
        ATRIUM_DATABASE_URL=f"{server}/{name}",
        ATRIUM_REDIS_URL=redis,
        ATRIUM_REDIS_PREFIX=name,
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        ATRIUM_WORKER_CONCURRENCY=str(args.concurrency),
        ATRIUM_RATE_LIMIT_PREMIUM="1000000/hour",
        ATRIUM_SSE_MAX_STREAMS_PER_KEY="10000",
    )
    procs: list[subprocess.Popen[bytes]] = []
    try:
        key = migrate_and_key(env)
        logs = Path(tempfile.mkdtemp(prefix="atrium-scaleout-"))
        print(f"process logs in {logs}", flush=True)

        def start(name: str, *command: str) -> subprocess.Popen[bytes]:
            with (logs / f"{name}.log").open("wb") as out:
                return subprocess.Popen(
                    [ATRIUM, *command], env=env, stdout=out, stderr=subprocess.STDOUT
                )

        procs.append(start("api", "serve", "--no-worker", "--port", str(port)))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        print(
            f"\n== PostgreSQL + Redis, 1 API process, {workers} worker process(es) ==", flush=True
        )
        url = f"http://127.0.0.1:{port}"
        run_ids = asyncio.run(_queue_runs(url, key, args.drain)) if args.drain else []
        procs += [start(f"worker-{n}", "worker") for n in range(workers)]
        if run_ids:
            asyncio.run(_report_drain(url, key, run_ids, workers))
        time.sleep(1)  # the workers connect and subscribe
        subprocess.run(
            [
                sys.executable,
                str(HERE / "runs_bench.py"),
                "--url",
                f"http://127.0.0.1:{port}",
                "--key",
                key,
                "--single",
                str(args.single),
                "--burst",
                str(args.burst),
                "--streams",
                "0",
            ],
            check=True,
        )
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
        asyncio.run(postgres_admin(server, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


async def _queue_runs(url: str, key: str, count: int) -> list[str]:
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
    ) as http:
        slots = asyncio.Semaphore(32)

        async def create(index: int) -> str:
            async with slots:
                response = await http.post(RUNS, json={"prompt": f"drain {index}"})
                response.raise_for_status()
                run_id: str = response.json()["run_id"]
                return run_id

        return list(await asyncio.gather(*(create(index) for index in range(count))))


async def _report_drain(url: str, key: str, run_ids: list[str], workers: int) -> None:
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
    ) as http:
        await wait_drained(http)
        runs = await runs_of(http, run_ids)
    done = [run for run in runs if run["status"] == "completed"]
    first = min(stamp(run["started_at"]) for run in done)
    last = max(stamp(run["finished_at"]) for run in done)
    print(
        f"drain of {len(run_ids)} queued runs by {workers} worker process(es): "
        f"completed={len(done)} in {last - first:.2f} s = {len(done) / (last - first):.0f} runs/s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--postgres",
        default="postgresql+asyncpg://postgres@127.0.0.1:5432",
        help="server URL without a database name",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--single", type=int, default=200, help="single runs for latency (200)")
    parser.add_argument("--burst", type=int, default=1000, help="runs submitted at once (1000)")
    parser.add_argument("--concurrency", type=int, default=32, help="runs per worker at once")
    parser.add_argument(
        "--drain", type=int, default=1000, help="runs queued before the workers start (1000)"
    )
    args = parser.parse_args()
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.0f} ms of CPU here")
    for workers in (1, 2):
        _run(args.postgres, args.redis, workers, args)


if __name__ == "__main__":
    main()
