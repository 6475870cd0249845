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
    .venv/bin/python bench/scaleout_bench.py --capped              # cgroup-capped, as root
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

# runs_bench: this folder (a script's own directory is on its path)
from harness import (
    atrium_cluster,
    calibration_ms,
    free_port,
    migrate_and_key,
    named_pids,
    postgres_admin,
    stamp,
)
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


# --- capped mode: each atrium process in its own cgroup v1 `cpu` group -------------------------

CGROUP_CPU = Path("/sys/fs/cgroup/cpu")
PERIOD_US = 100_000
MAX_SHARES = 262_144


class CpuGroups:
    """cgroup v1 `cpu` child groups `atrium-bench-<hex>-<name>`, each with a CFS quota; every
    group made is removed by `close` (its processes moved back to the root group first)."""

    def __init__(self) -> None:
        self.prefix = f"atrium-bench-{secrets.token_hex(3)}"
        self.made: list[Path] = []

    @staticmethod
    def unavailable() -> str | None:
        """Why groups cannot be made here, or None."""
        if os.geteuid() != 0:
            return "not root: cgroup groups need root"
        if not (CGROUP_CPU / "cgroup.procs").exists():
            return f"no cgroup v1 cpu controller at {CGROUP_CPU}"
        if not os.access(CGROUP_CPU, os.W_OK):
            return f"{CGROUP_CPU} is not writable"
        return None

    def put(self, name: str, pid: int, quota: float) -> None:
        group = CGROUP_CPU / f"{self.prefix}-{name}"
        group.mkdir()
        self.made.append(group)
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(int(quota * PERIOD_US)))
        # The quota caps; the largest weight makes the cap also a guarantee on a busy machine
        # (each process of the root group weighs 1024), as if the process had its own cores.
        (group / "cpu.shares").write_text(str(MAX_SHARES))
        for task in [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]:
            with contextlib.suppress(ProcessLookupError, OSError):
                (group / "cgroup.procs").write_text(str(task))

    def close(self) -> None:
        for group in reversed(self.made):
            with contextlib.suppress(OSError):
                for task in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (CGROUP_CPU / "cgroup.procs").write_text(task)
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                print(f"could not remove cgroup {group}", file=sys.stderr)
        self.made.clear()


async def _requests(urls: list[str], key: str, count: int) -> float:
    """Requests/s of `count` GET /runs (limit 20) round-robin over the API processes, 64 at
    a time: the API processes' request throughput, a cheap authenticated read."""
    headers = {"Authorization": f"Bearer {key}"}
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=url, headers=headers, timeout=120)
            )
            for url in urls
        ]
        slots = asyncio.Semaphore(64)
        busy: list[int] = []

        async def one(index: int) -> None:
            async with slots:
                while True:
                    response = await clients[index % len(clients)].get(RUNS, params={"limit": 20})
                    if response.status_code != 503:  # BUSY: no database connection in time
                        break
                    busy.append(index)
                    await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one(index) for index in range(count)))
        rate = count / (time.perf_counter() - started)
    if busy:
        print(f"503 BUSY retried: {len(busy)}")
    return rate


def capped(args: argparse.Namespace) -> None:
    """Workers 1→2→3 (`--fixed-apis` API processes) and API processes 1→2→3
    (`--fixed-workers`), each API process in its own CPU group of `--quota` cores and each
    worker in one of `--worker-quota` cores;
    PostgreSQL, Redis, the model server and the followers outside them."""
    import streaming_bench

    why = CpuGroups.unavailable()
    if why:
        raise SystemExit(f"--capped cannot run: {why}")
    postgres, redis = named_pids("postgres"), named_pids("redis-server")
    print(f"shared parts measured: postgres pids {postgres}, redis-server pids {redis}")
    burst_args = argparse.Namespace(
        runs=args.runs,
        latency=args.latency,
        chunks=args.chunks,
        offline=False,
        tools=None,
        warmup=10,
        profile=None,
    )
    worker_sweep = [(args.fixed_apis, w) for w in (1, 2, 3)]
    api_sweep = [(a, args.fixed_workers) for a in (1, 2, 3)]
    plan = {"both": worker_sweep + api_sweep, "workers": worker_sweep, "apis": api_sweep}[
        args.sweep
    ]
    seen: dict[tuple[int, int], tuple[float, float, float]] = {}
    api_quota, worker_quota = args.quota, args.worker_quota or args.quota
    groups = CpuGroups()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with streaming_bench.slow_llm(latency=args.latency, chunks=args.chunks) as base_url:
            settings = {"llm_base_url": base_url, "worker_concurrency": str(args.runs)}
            for apis, workers in plan:
                if (apis, workers) in seen:
                    continue
                print(
                    f"\n-- capped {api_quota:g} core an API process, {worker_quota:g} a worker: "
                    f"{apis} API process(es), "
                    f"{workers} worker(s); uptime: {_uptime()} --",
                    flush=True,
                )
                with atrium_cluster(
                    postgres=args.postgres, redis=args.redis, apis=apis, settings=settings
                ) as cluster:
                    try:
                        cluster.start_workers(workers)
                        for index, process in enumerate(cluster.apis):
                            groups.put(f"api{index}", process.pid, api_quota)
                        for index, process in enumerate(cluster.workers):
                            groups.put(f"worker{index}", process.pid, worker_quota)
                        processes = {
                            "api": [p.pid for p in cluster.apis],
                            "worker": [p.pid for p in cluster.workers],
                            "postgres": postgres,
                            "redis": redis,
                        }
                        # Each worker's start-up (imports, 1-2 s of CPU: several seconds at 0.3
                        # core) and first runs (the provider SDK's import, statements compiled)
                        # are its own, not the burst's: measured inside the burst, they made CPU
                        # a run grow with the number of workers (decision 0063).
                        atrium_pids = processes["api"] + processes["worker"]
                        _settle(atrium_pids, "start-up")
                        warm = argparse.Namespace(**{**vars(burst_args), "runs": 20 * workers})
                        print(f"warm-up burst ({warm.runs} runs, not measured):", flush=True)
                        spent = _cpu_of(processes["worker"])
                        asyncio.run(
                            streaming_bench.burst(cluster.urls, cluster.key, processes, warm)
                        )
                        spent = [
                            b - a for a, b in zip(spent, _cpu_of(processes["worker"]), strict=True)
                        ]
                        print("warm-up CPU by worker: " + ", ".join(f"{s:.2f} s" for s in spent))
                        _settle(atrium_pids, "warm-up")
                        print("measured burst:", flush=True)
                        figures = asyncio.run(
                            streaming_bench.burst(cluster.urls, cluster.key, processes, burst_args)
                        )
                        rps = asyncio.run(_requests(cluster.urls, cluster.key, args.requests))
                        print(f"API request throughput (GET runs): {rps:.0f} requests/s")
                    finally:
                        groups.close()
                seen[(apis, workers)] = (figures.server_runs_per_second, rps, figures.calibration)
    finally:
        groups.close()
        signal.signal(signal.SIGTERM, previous)
    print(
        f"\n== capped summary ({api_quota:g} core an API process, {worker_quota:g} a worker; "
        f"uptime {_uptime()}) =="
    )
    if args.sweep != "apis":
        base_w = seen[(args.fixed_apis, 1)][0]
        for workers in (1, 2, 3):
            rate, _rps, cal = seen[(args.fixed_apis, workers)]
            print(
                f"{args.fixed_apis} API(s), {workers} worker(s): {rate:.1f} runs/s = "
                f"{rate / base_w:.2f}x (cal {cal:.1f} ms)"
            )
    if args.sweep == "workers":
        return
    base_a = seen[(1, args.fixed_workers)][1]
    for apis in (1, 2, 3):
        rate, rps, cal = seen[(apis, args.fixed_workers)]
        print(
            f"{apis} API(s), {args.fixed_workers} worker(s): {rps:.0f} requests/s = "
            f"{rps / base_a:.2f}x, {rate:.1f} runs/s (cal {cal:.1f} ms)"
        )


def _cpu_of(pids: list[int]) -> list[float]:
    times = [psutil.Process(pid).cpu_times() for pid in pids]
    return [t.user + t.system for t in times]


def _settle(pids: list[int], what: str, *, timeout: float = 90.0) -> None:
    """Until each process uses under 4% of a core over half a second (its start-up, or the
    tail of a warm-up, is over)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = _cpu_of(pids)
        time.sleep(0.5)
        if all(b - a < 0.02 for a, b in zip(before, _cpu_of(pids), strict=True)):
            break
    print(f"{what}: settled after {time.monotonic() - started:.1f} s", flush=True)


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


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
    parser.add_argument("--capped", action="store_true", help="each process in a CPU group")
    parser.add_argument(
        "--quota", type=float, default=0.3, help="capped: cores an API process (0.3)"
    )
    # Small workers beside two API processes: the worker sweep then measures the workers, not
    # the API processes or the 2-core machine under them (decision 0063).
    parser.add_argument(
        "--worker-quota",
        type=float,
        default=0.12,
        help="capped: cores a worker process (0.12; 0 = --quota)",
    )
    # Long enough that the burst's ramp and its last model latency are a small part of it.
    parser.add_argument("--runs", type=int, default=2000, help="capped: runs a burst (2000)")
    parser.add_argument("--latency", type=float, default=2.0, help="capped: model seconds (2)")
    parser.add_argument("--chunks", type=int, default=20, help="capped: chunks an answer (20)")
    parser.add_argument("--requests", type=int, default=2000, help="capped: GETs timed (2000)")
    parser.add_argument("--fixed-workers", type=int, default=2, help="capped: API sweep (2)")
    parser.add_argument(
        "--fixed-apis", type=int, default=2, help="capped: API processes of the worker sweep (2)"
    )
    parser.add_argument(
        "--sweep", choices=("both", "workers", "apis"), default="both", help="capped: which sweep"
    )
    args = parser.parse_args()
    if args.capped:
        capped(args)
        return
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.0f} ms of CPU here")
    for workers in (1, 2):
        _run(args.postgres, args.redis, workers, args)


if __name__ == "__main__":
    main()
