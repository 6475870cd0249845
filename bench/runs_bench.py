"""Benchmark of agent runs with the offline model, against a real `atrium serve` on loopback.

Three measurements:
1. latency: single runs one after another, create → `run.completed` seen on the SSE stream;
2. throughput: N runs submitted at once, runs completed per second (server timestamps);
3. streams: many concurrent SSE streams on the one API process: event lag (receive time minus
   the event's `created_at`) and the server's peak RSS.

By default it starts its own server (temp SQLite file, in-process worker) and stops it at the
end; `--url` and `--key` target a running one instead (then RSS is not measured).

    .venv/bin/python bench/runs_bench.py
    .venv/bin/python bench/runs_bench.py --single 300 --burst 500 --streams 1000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

RUNS = "/api/v1/public/agent/runs"
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _report(name: str, values_ms: list[float]) -> None:
    print(
        f"{name}: n={len(values_ms)} p50={_percentile(values_ms, 0.5):.1f} ms "
        f"p99={_percentile(values_ms, 0.99):.1f} ms max={max(values_ms):.1f} ms "
        f"mean={statistics.fmean(values_ms):.1f} ms"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stamp(value: str) -> float:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


@contextlib.contextmanager
def _server(args: argparse.Namespace) -> Iterator[tuple[str, str, int | None]]:
    if args.url:
        yield args.url.rstrip("/"), args.key, None
        return
    workdir = Path(tempfile.mkdtemp(prefix="atrium-bench-"))
    key = "atr_" + secrets.token_urlsafe(32)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{workdir / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY=key,
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        ATRIUM_RATE_LIMIT_STANDARD="100000000/hour",
        ATRIUM_LOG_LEVEL="WARNING",
        ATRIUM_WORKER_CONCURRENCY=str(args.concurrency),
        # One key follows every stream of the bench.
        ATRIUM_SSE_MAX_STREAMS_PER_KEY=str(args.streams + 100),
    )
    atrium = str(Path(sys.executable).with_name("atrium"))
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        [atrium, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise SystemExit("server did not start; see " + str(workdir / "server.log"))
        yield url, key, process.pid
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _peak_rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


async def _frames(response: httpx.Response) -> AsyncIterator[tuple[float, dict[str, Any]]]:
    """(arrival time, frame) of each SSE event of a response."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk.replace("\r\n", "\n")
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            frame: dict[str, Any] = {}
            for line in block.split("\n"):
                if line and not line.startswith(":"):
                    name, _, value = line.partition(":")
                    frame[name] = value.strip()
            if "data" in frame:
                frame["data"] = json.loads(frame["data"])
                yield time.time(), frame


async def _create(http: httpx.AsyncClient, prompt: str) -> str:
    # An Idempotency-Key makes retrying a create on a dropped keep-alive connection safe.
    headers = {"Idempotency-Key": secrets.token_hex(8)}
    for attempt in range(3):
        try:
            response = await http.post(RUNS, json={"prompt": prompt}, headers=headers)
            break
        except httpx.TransportError:
            if attempt == 2:
                raise
    response.raise_for_status()
    run_id: str = response.json()["run_id"]
    return run_id


async def bench_latency(http: httpx.AsyncClient, count: int) -> None:
    latencies: list[float] = []
    server: list[float] = []
    for index in range(count):
        started = time.perf_counter()
        run_id = await _create(http, f"latency {index}")
        async with http.stream("GET", f"{RUNS}/{run_id}/events") as response:
            async for _arrived, frame in _frames(response):
                if frame.get("event") in TERMINAL:
                    break
        latencies.append((time.perf_counter() - started) * 1000)
        run = (await http.get(f"{RUNS}/{run_id}")).json()
        server.append((_stamp(run["finished_at"]) - _stamp(run["created_at"])) * 1000)
    _report("single run create->completed (client, via SSE)", latencies)
    _report("single run created_at->finished_at (server)", server)


async def _wait_drained(http: httpx.AsyncClient) -> None:
    while True:
        busy = 0
        for status in ("queued", "running"):
            page = (await http.get(RUNS, params={"status": status, "limit": 1})).json()
            busy += len(page["data"])
        if not busy:
            return
        await asyncio.sleep(0.05)


async def bench_throughput(http: httpx.AsyncClient, count: int) -> None:
    started = time.perf_counter()
    run_ids = await asyncio.gather(*(_create(http, f"burst {i}") for i in range(count)))
    submitted = time.perf_counter()
    await _wait_drained(http)
    drained = time.perf_counter()
    runs: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = (await http.get(RUNS, params=params)).json()
        runs += [run for run in page["data"] if run["run_id"] in set(run_ids)]
        cursor = page["next_cursor"]
        if not cursor:
            break
    completed = [run for run in runs if run["status"] == "completed"]
    first = min(_stamp(run["created_at"]) for run in runs)
    last = max(_stamp(run["finished_at"]) for run in completed)
    print(
        f"burst of {count}: submitted in {submitted - started:.2f} s, all finished after "
        f"{drained - started:.2f} s (client); completed={len(completed)}; "
        f"server first-create→last-finish {last - first:.2f} s = "
        f"{len(completed) / (last - first):.0f} runs/s"
    )


async def bench_streams(
    http: httpx.AsyncClient, streams: int, per_run: int, pid: int | None
) -> None:
    runs = max(1, streams // per_run)
    lags: list[float] = []
    ended = 0

    replayed = 0

    async def follow(run_id: str) -> None:
        nonlocal ended, replayed
        async with http.stream("GET", f"{RUNS}/{run_id}/events") as response:
            opened = time.time()
            async for arrived, frame in _frames(response):
                created = _stamp(frame["data"]["created_at"])
                # Lag is for live events; those older than the stream were replayed.
                if created >= opened:
                    lags.append((arrived - created) * 1000)
                else:
                    replayed += 1
                if frame.get("event") in TERMINAL:
                    ended += 1
                    return

    # Hold every stream open first (on runs created slowly enough to still be running or queued)
    run_ids = await asyncio.gather(*(_create(http, f"stream {i}") for i in range(runs)))
    started = time.perf_counter()
    await asyncio.gather(*(follow(run_id) for run_id in run_ids for _ in range(per_run)))
    elapsed = time.perf_counter() - started
    _report(f"{runs * per_run} concurrent SSE streams: live event lag", lags)
    print(f"replayed (older than their stream) events: {replayed}")
    rss = _peak_rss_mb(pid)
    print(
        f"streams ended={ended} in {elapsed:.2f} s; server peak RSS "
        + (f"{rss:.0f} MB" if rss is not None else "n/a (external server)")
    )


async def main(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    with _server(args) as (url, key, pid):
        limits = httpx.Limits(max_connections=args.streams + 100, max_keepalive_connections=200)
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120, limits=limits
        ) as http:
            await bench_latency(http, 5)  # warm-up: imports, caches, first connections
            if args.single:
                await bench_latency(http, args.single)
            if args.burst:
                await bench_throughput(http, args.burst)
            if args.streams:
                await bench_streams(http, args.streams, args.per_run, pid)
            rss = _peak_rss_mb(pid)
            if rss is not None:
                print(f"server peak RSS over the whole bench: {rss:.0f} MB")
    print(f"load average after: {os.getloadavg()}")


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--url", help="target a running server (127.0.0.1) instead of starting one")
    parser.add_argument("--key", help="API key for --url")
    parser.add_argument("--single", type=int, default=200, help="single runs for latency (200)")
    parser.add_argument("--burst", type=int, default=500, help="runs submitted at once (500)")
    parser.add_argument("--streams", type=int, default=1000, help="concurrent SSE streams (1000)")
    parser.add_argument("--per-run", type=int, default=4, help="streams per run (4)")
    parser.add_argument("--concurrency", type=int, default=64, help="worker concurrency (64)")
    args = parser.parse_args()
    if args.url and not args.key:
        parser.error("--url needs --key")
    if args.url and not args.url.startswith(("http://127.0.0.1", "http://localhost")):
        parser.error("benchmarks only target loopback")
    return args


if __name__ == "__main__":
    asyncio.run(main(_parse()))
