"""Soak: mixed traffic held against one `atrium serve` process for a while (default 10 minutes).

The mix, from `--clients` concurrent loops: domains and spaces CRUD (store, list with search,
show, update, delete), agents and usage reads, and agent runs (create, follow the SSE stream to
its terminal event, read the run and its artifacts, download one). Runs use the built-in offline
model, so nothing leaves the machine.

Reports the number of errors (a transport error, a 5xx, or a status the step did not expect;
target 0), p50/p99 latency per route template, and the server's RSS after the warm-up and at the
end (target: growth <= 10 %). Exit status 1 when a target is missed.

By default it starts its own server (temp SQLite file, in-process worker) on a loopback port and
stops it at the end; `--url`, `--key` and `--pid` target a running one instead.

    .venv/bin/python bench/soak.py                     # 10 minutes
    .venv/bin/python bench/soak.py --duration 60 --clients 8
    .venv/bin/python bench/soak.py --duration 3600 --clients 8 --warmup 300 --verbose \
        --allocators /tmp/alloc --allocators-every 6   # what each allocator holds, every minute
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from harness import calibration_ms, free_port, percentile

RUNS = "/api/v1/public/agent/runs"
_IDS = re.compile(r"/(?:\d+|(?:run|agt|art|thr)_[A-Za-z0-9_-]+)(?=/|$)")


def rss_kib(pid: int) -> int:
    """Resident set size of a process (Linux /proc), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    requests: int = 0

    def record(self, method: str, url: str, started: float, problem: str | None) -> None:
        route = f"{method} {_IDS.sub('/{id}', url.split('?', 1)[0])}"
        self.latencies[route].append((time.perf_counter() - started) * 1000)
        self.requests += 1
        if problem is not None:
            self.errors.append(f"{route}: {problem}")


class Traffic:
    """One client loop's steps; every request is timed and judged."""

    def __init__(self, http: httpx.AsyncClient, stats: Stats, seed: int) -> None:
        self.http = http
        self.stats = stats
        self.random = random.Random(seed)
        self.seed = seed
        self.counter = 0

    async def call(
        self, method: str, url: str, expect: set[int], **kwargs: Any
    ) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            response = await self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.stats.record(method, url, started, f"{type(exc).__name__}: {exc}")
            return None
        problem = None
        if response.status_code not in expect:
            problem = f"status {response.status_code}: {response.text[:200]}"
        self.stats.record(method, url, started, problem)
        return response if problem is None else None

    def name(self, kind: str) -> str:
        self.counter += 1
        return f"{kind}-{self.seed}-{self.counter}-{secrets.token_hex(3)}"

    async def domains(self) -> None:
        name = self.name("soak") + ".example.com"
        made = await self.call("POST", "/api/v1/domains", {201}, data={"name": name})
        if made is None:
            return
        path = f"/api/v1/domains/{made.json()['data']['id']}"
        await self.call("GET", path, {200})
        await self.call(
            "PATCH", path, {200}, data={"index_page": f"https://example.com/{self.counter}"}
        )
        await self.call(
            "GET", "/api/v1/domains", {200}, params={"search": "soak", "per_page": "10"}
        )
        if self.random.random() < 0.8:  # some records stay, so the tables grow as in real use
            await self.call("DELETE", path, {200})

    async def spaces(self) -> None:
        made = await self.call(
            "POST",
            "/api/v1/spaces",
            {201},
            data={"name": self.name("s")[:32], "color": str(self.random.randint(1, 6))},
        )
        if made is None:
            return
        path = f"/api/v1/spaces/{made.json()['data']['id']}"
        await self.call("PUT", path, {200}, data={"color": "2"})
        await self.call("GET", "/api/v1/spaces", {200}, params={"sort_by": "name"})
        await self.call("DELETE", path, {200})

    async def agents(self) -> None:
        await self.call("GET", "/v1/agents", {200})
        await self.call("GET", "/v1/analytics/usage", {200})
        await self.call("GET", "/v1/account", {200})

    async def run(self) -> None:
        made = await self.call("POST", RUNS, {201}, json={"prompt": self.name("soak prompt")})
        if made is None:
            return
        run_id = made.json()["run_id"]
        started = time.perf_counter()
        url = f"{RUNS}/{run_id}/events"
        problem: str | None = "stream ended without a terminal event"
        try:
            async with self.http.stream("GET", url, timeout=60) as stream:
                if stream.status_code != 200:
                    problem = f"status {stream.status_code}"
                else:
                    async for line in stream.aiter_lines():
                        if line.startswith("event: run."):
                            kind = line.removeprefix("event: ")
                            if kind in {"run.completed", "run.failed", "run.cancelled"}:
                                problem = None if kind == "run.completed" else kind
                                break
        except httpx.HTTPError as exc:
            problem = f"{type(exc).__name__}: {exc}"
        self.stats.record("GET", url, started, problem)
        done = await self.call("GET", f"{RUNS}/{run_id}", {200})
        await self.call("GET", f"{RUNS}/{run_id}/artifacts", {200})
        if done is not None and done.json().get("artifacts"):
            artifact = done.json()["artifacts"][0]["artifact_id"]
            await self.call("GET", f"{RUNS}/{run_id}/artifacts/{artifact}/content", {200})
        await self.call("GET", RUNS, {200}, params={"limit": "10"})

    async def loop(self, deadline: float) -> None:
        steps = [self.domains, self.spaces, self.agents, self.run]
        weights = [3, 2, 2, 2]
        while time.monotonic() < deadline:
            await self.random.choices(steps, weights)[0]()


@contextlib.contextmanager
def own_server(
    workdir: Path, *, extra_env: dict[str, str], traced: Path | None
) -> Iterator[tuple[str, str, int]]:
    key = "atr_" + secrets.token_urlsafe(32)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{workdir / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY=key,
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        ATRIUM_RATE_LIMIT_STANDARD="100000000/hour",
        ATRIUM_LOG_LEVEL="WARNING",
    )
    env.update(extra_env)
    command = [str(Path(sys.executable).with_name("atrium"))]
    if traced is not None:
        command = [sys.executable, str(Path(__file__).with_name("traced_serve.py")), str(traced)]
    with (workdir / "server.log").open("w") as log:
        process = subprocess.Popen(
            [*command, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300  # start-up is imports: slow on a busy machine
        while True:
            if process.poll() is not None:
                raise RuntimeError((workdir / "server.log").read_text())
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.1)
        yield url, key, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _snapshot(pid: int, folder: Path, count: int) -> Path:
    """Signal the traced server (`traced_serve.py`) to write its `count`-th heap snapshot (the
    0th starts tracing)."""
    os.kill(pid, signal.SIGUSR1)
    done = folder / f"snapshot-{count}.done"
    deadline = time.monotonic() + 120
    while not done.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the server wrote no snapshot")
        time.sleep(0.2)
    return folder / f"snapshot-{count}.pickle"


def allocators(pid: int, folder: Path, count: int) -> str:
    """Signal the traced server to write its allocators' figures (`traced_serve.py`: pymalloc,
    the collector, glibc, SQLite per connection, SQLAlchemy's LRU caches); one line of them."""
    os.kill(pid, signal.SIGUSR2)
    report = folder / f"memory-{count}.txt"
    deadline = time.monotonic() + 30
    while not report.exists() or not report.read_text().endswith("\n"):
        if time.monotonic() > deadline:
            return "no memory report"
        time.sleep(0.05)
    sqlite: dict[str, int] = defaultdict(int)
    connections = 0
    figures: list[str] = []
    for line in report.read_text().splitlines():
        words = line.split()
        if words[0] == "connection":
            connections += 1
            for name, value in zip(words[2::2], words[3::2], strict=True):
                sqlite[name] += int(value)
        elif words[0] == "lru":  # index, size, capacity, inserts
            if int(words[7]):
                figures.append(f"lru{words[1]} {words[3]}/{words[5]} inserts {words[7]}")
        else:  # counts as they are, bytes in KiB
            counted = words[0] in {
                "py_arenas", "gc_full", "gc_full_collected", "gc_frozen", "trim_calls",
                "trim_cpu_us",
            }  # fmt: skip
            figures.append(f"{words[0]} {int(words[1]) if counted else int(words[1]) // 1024}")
    per_connection = " ".join(f"{name} {value // 1024}" for name, value in sqlite.items())
    return f"{', '.join(figures)}; {connections} sqlite connections (KiB): {per_connection}"


def heap_growth(first: Path, last: Path, *, top: int = 15) -> str:
    """The allocation sites whose live memory grew most between two tracemalloc snapshots."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__)]
    before = tracemalloc.Snapshot.load(str(first)).filter_traces(ignore)
    after = tracemalloc.Snapshot.load(str(last)).filter_traces(ignore)
    lines = [
        f"traced heap: {sum(s.size for s in before.statistics('filename')) / 2**20:.1f} MB -> "
        f"{sum(s.size for s in after.statistics('filename')) / 2**20:.1f} MB"
    ]
    for stat in after.compare_to(before, "traceback")[:top]:
        lines.append(f"{stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        lines += [
            f"      {frame}" for frame in stat.traceback.format(limit=6, most_recent_first=True)
        ]
    return "\n".join(lines)


def trend(samples: list[int], seconds: float) -> str:
    """Least-squares slope of RSS samples taken every `seconds`, per hour, and how many
    samples were higher than the one before."""
    if len(samples) < 3:
        return "too few samples for a trend"
    xs = [i * seconds / 3600 for i in range(len(samples))]
    mx, my = statistics.fmean(xs), statistics.fmean(samples)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, samples, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    rises = sum(1 for a, b in itertools.pairwise(samples) if b > a)
    return (
        f"rss after warm-up: first {samples[0] / 1024:.1f} MB, last {samples[-1] / 1024:.1f} MB, "
        f"min {min(samples) / 1024:.1f}, max {max(samples) / 1024:.1f}; least-squares slope "
        f"{slope / 1024:+.1f} MB/hour; {rises} of {len(samples) - 1} samples above the previous"
    )


async def soak(
    url: str, key: str, pid: int | None, args: argparse.Namespace, traced: Path | None = None
) -> int:
    stats = Stats()
    headers = {"Authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=args.clients * 2)
    print(f"calibration: sum(range(10**6)) = {calibration_ms():.1f} ms of CPU", flush=True)
    snapshots: list[Path] = []
    reports = 0
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=30, limits=limits) as http:
        warmup = min(args.warmup, args.duration / 4)
        begin = time.monotonic()
        deadline = begin + args.duration
        loops = [
            asyncio.create_task(Traffic(http, stats, seed).loop(deadline))
            for seed in range(args.clients)
        ]
        rss_boot = rss_kib(pid) if pid else None
        await asyncio.sleep(warmup)
        rss_start = rss_kib(pid) if pid else None
        if traced and pid:
            await asyncio.to_thread(_snapshot, pid, traced, 0)  # tracing starts
        samples: list[int] = [rss_start] if rss_start else []
        middle = begin + warmup + (args.duration - warmup) / 3
        while time.monotonic() < deadline:
            if traced and pid and not snapshots and time.monotonic() >= middle:
                snapshots.append(await asyncio.to_thread(_snapshot, pid, traced, 1))
            await asyncio.sleep(min(args.sample, max(0.0, deadline - time.monotonic())))
            if pid:
                samples.append(rss_kib(pid))
                if args.verbose:
                    memory = ""
                    if args.allocators and (len(samples) - 1) % args.allocators_every == 0:
                        reports += 1
                        memory = "; " + await asyncio.to_thread(
                            allocators, pid, args.allocators, reports
                        )
                    print(
                        f"{time.monotonic() - begin:7.0f} s rss {samples[-1]} KiB, "
                        f"{stats.requests} requests{memory}",
                        flush=True,
                    )
        if traced and pid:
            snapshots.append(await asyncio.to_thread(_snapshot, pid, traced, len(snapshots) + 1))
        await asyncio.gather(*loops)
        rss_end = rss_kib(pid) if pid else None
        elapsed = time.monotonic() - begin

    print(
        f"soak: {elapsed:.0f} s, {args.clients} clients, {stats.requests} requests "
        f"({stats.requests / elapsed:.0f}/s)"
    )
    print(f"errors: {len(stats.errors)}")
    for line in stats.errors[:20]:
        print(f"  {line}")
    print(f"{'route':<62} {'n':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    for route, values in sorted(stats.latencies.items()):
        print(
            f"{route:<62} {len(values):>7} {percentile(values, 0.5):>8.1f} "
            f"{percentile(values, 0.99):>8.1f} {max(values):>8.1f}"
        )
    print(f"calibration: sum(range(10**6)) = {calibration_ms():.1f} ms of CPU")
    failed = bool(stats.errors)
    if rss_start and rss_end:
        growth = (rss_end - rss_start) / rss_start * 100
        print(
            f"rss: boot {rss_boot} KiB, after {warmup:.0f} s warm-up {rss_start} KiB, "
            f"end {rss_end} KiB, growth {growth:+.1f} % (target <= 10 %); "
            f"samples every {args.sample:g} s: {samples}"
        )
        print(trend(samples, args.sample))
        failed = failed or growth > 10
    if len(snapshots) == 2:
        print(heap_growth(*snapshots))
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=600, help="seconds (default 600)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent client loops")
    parser.add_argument(
        "--warmup", type=float, default=60, help="seconds before the start RSS (capped at 1/4)"
    )
    parser.add_argument("--sample", type=float, default=10, help="seconds between RSS samples")
    parser.add_argument("--verbose", action="store_true", help="print each RSS sample")
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable of the server (MALLOC_ARENA_MAX=2, ATRIUM_…)",
    )
    parser.add_argument(
        "--tracemalloc",
        type=Path,
        metavar="DIR",
        help="trace the server's allocations; print what grew from warm-up to the end",
    )
    parser.add_argument(
        "--allocators",
        type=Path,
        metavar="DIR",
        help="with --verbose: samples also print the server's allocators (pymalloc arenas and "
        "live bytes, collections, glibc heaps, SQLite's memory per connection, SQLAlchemy's "
        "LRU caches), from a report it writes to DIR",
    )
    parser.add_argument(
        "--allocators-every",
        type=int,
        default=1,
        metavar="N",
        help="with --allocators: a report every N samples (default 1)",
    )
    parser.add_argument("--url", help="target a running server instead of starting one")
    parser.add_argument("--key", help="API key for --url")
    parser.add_argument("--pid", type=int, help="pid of the --url server, to measure its RSS")
    args = parser.parse_args()
    if args.url:
        if not args.key:
            parser.error("--url needs --key")
        sys.exit(asyncio.run(soak(args.url.rstrip("/"), args.key, args.pid, args)))
    with (
        tempfile.TemporaryDirectory(prefix="atrium-soak-") as tmp,
        own_server(
            Path(tmp),
            extra_env=dict(item.split("=", 1) for item in args.env),
            traced=args.tracemalloc or args.allocators,
        ) as (url, key, pid),
    ):
        code = asyncio.run(soak(url, key, pid, args, args.tracemalloc))
    sys.exit(code)


if __name__ == "__main__":
    main()
