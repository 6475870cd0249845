"""Benchmark of agent runs with the offline model, against a real `atrium serve` on loopback.

Three measurements:
1. latency: single runs one after another, create → `run.completed` seen on the SSE stream;
2. throughput: N runs submitted at once, runs completed per second (server timestamps);
3. streams: many concurrent SSE streams on the one API process, all open and idle before
   the runs they follow start (held back behind a gate run in their thread, see `_Gate`),
   then every event live: event lag (receive time minus the event's `created_at`, both clocks
   of this machine) and the server's peak RSS.

By default it starts its own server (temp SQLite file, in-process worker) and stops it at the
end; `--url` and `--key` target a running one instead (then RSS is not measured, and the
streams part needs that server's ATRIUM_LLM_BASE_URL to be the gate's, so use --streams 0).

    .venv/bin/python bench/runs_bench.py
    .venv/bin/python bench/runs_bench.py --single 300 --burst 500 --streams 1000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from harness import calibration_ms, free_port, percentile, sse_frames, stamp

RUNS = "/api/v1/public/agent/runs"
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}


def _report(name: str, values_ms: list[float]) -> None:
    print(
        f"{name}: n={len(values_ms)} p50={percentile(values_ms, 0.5):.1f} ms "
        f"p99={percentile(values_ms, 0.99):.1f} ms max={max(values_ms):.1f} ms "
        f"mean={statistics.fmean(values_ms):.1f} ms"
    )


@contextlib.contextmanager
def _server(args: argparse.Namespace) -> Iterator[tuple[str, str, int | None]]:
    if args.url:
        yield args.url.rstrip("/"), args.key, None
        return
    workdir = Path(tempfile.mkdtemp(prefix="atrium-bench-"))
    key = "atr_" + secrets.token_urlsafe(32)
    port = free_port()
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
        # The gate model of the streams benchmark (see `_Gate`).
        ATRIUM_LLM_BASE_URL=args.llm_base_url,
    )
    atrium = str(Path(sys.executable).with_name("atrium"))
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        [atrium, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120  # start-up is imports: slow on a busy machine
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


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time the process has used so far (Linux)."""
    if pid is None:
        return None
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return None


def _peak_rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return None


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
            async for _arrived, frame in sse_frames(response):
                if frame.get("event") in TERMINAL:
                    break
        latencies.append((time.perf_counter() - started) * 1000)
        run = (await http.get(f"{RUNS}/{run_id}")).json()
        server.append((stamp(run["finished_at"]) - stamp(run["created_at"])) * 1000)
    _report("single run create->completed (client, via SSE)", latencies)
    _report("single run created_at->finished_at (server)", server)


async def wait_drained(http: httpx.AsyncClient) -> None:
    """Until no run is queued or running."""
    while True:
        busy = 0
        for status in ("queued", "running"):
            page = (await http.get(RUNS, params={"status": status, "limit": 1})).json()
            busy += len(page["data"])
        if not busy:
            return
        await asyncio.sleep(0.05)


async def runs_of(http: httpx.AsyncClient, run_ids: list[str]) -> list[dict[str, Any]]:
    """These runs as the API lists them (every page, newest first)."""
    wanted = set(run_ids)
    runs: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        page = (await http.get(RUNS, params=params)).json()
        runs += [run for run in page["data"] if run["run_id"] in wanted]
        cursor = page["next_cursor"]
        if not cursor:
            return runs


async def bench_throughput(http: httpx.AsyncClient, count: int, pid: int | None) -> None:
    cpu_before = _cpu_seconds(pid)
    started = time.perf_counter()
    run_ids = await asyncio.gather(*(_create(http, f"burst {i}") for i in range(count)))
    submitted = time.perf_counter()
    await wait_drained(http)
    drained = time.perf_counter()
    cpu_after = _cpu_seconds(pid)
    runs = await runs_of(http, list(run_ids))
    completed = [run for run in runs if run["status"] == "completed"]
    first = min(stamp(run["created_at"]) for run in runs)
    last = max(stamp(run["finished_at"]) for run in completed)
    print(
        f"burst of {count}: submitted in {submitted - started:.2f} s, all finished after "
        f"{drained - started:.2f} s (client); completed={len(completed)}; "
        f"server first-create→last-finish {last - first:.2f} s = "
        f"{len(completed) / (last - first):.0f} runs/s"
    )
    if cpu_before is not None and cpu_after is not None:
        used = cpu_after - cpu_before
        print(
            f"burst: server CPU {used:.1f} s = {used / count * 1000:.1f} ms per run "
            f"(create, execution, storage, the client's polling)"
        )


class _Gate:
    """A stand-in model server that answers nothing until released, then a 400 (no retries).

    A thread's runs execute one at a time, so a run of the bench's `gate` agent (model
    `openai-compatible:gate`, served here) holds back every run queued behind it in its thread:
    the streams are all open and idle before the first offline run starts, and every event of
    those runs is live on every stream.
    """

    def __init__(self) -> None:
        self.released = asyncio.Event()
        self.port = free_port()
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            await reader.readexactly(length)
            await self.released.wait()
            body = b'{"error":{"message":"gate released","type":"bench"}}'
            writer.write(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        writer.close()


async def bench_streams(
    http: httpx.AsyncClient, gate: _Gate, streams: int, per_run: int, threads: int, pid: int | None
) -> None:
    runs = max(1, streams // per_run)
    response = await http.post(
        "/v1/agents", json={"name": "gate", "config": {"model": "openai-compatible:gate"}}
    )
    response.raise_for_status()
    gate_agent = response.json()["agent_id"]
    # One gate run per thread, then the thread's share of the offline runs queued behind it.
    thread_ids: list[str] = []
    for _ in range(threads):
        response = await http.post(RUNS, json={"prompt": "gate", "agent_id": gate_agent})
        response.raise_for_status()
        thread_ids.append(response.json()["thread_id"])
    run_ids = []
    for index in range(runs):
        response = await http.post(
            RUNS, json={"prompt": f"stream {index}", "thread_id": thread_ids[index % threads]}
        )
        response.raise_for_status()
        run_ids.append(response.json()["run_id"])

    lags: list[float] = []
    opened = 0
    all_open = asyncio.Event()
    released_at = 0.0
    ended = 0

    async def follow(run_id: str) -> None:
        nonlocal opened, ended
        async with http.stream("GET", f"{RUNS}/{run_id}/events") as response:
            counted = False
            async for arrived, frame in sse_frames(response):
                if not counted:  # the replayed run.queued: this stream is open
                    counted = True
                    opened += 1
                    if opened == runs * per_run:
                        all_open.set()
                    continue
                lags.append((arrived - stamp(frame["data"]["created_at"])) * 1000)
                if frame.get("event") in TERMINAL:
                    ended += 1
                    return

    started = time.perf_counter()
    tasks = [asyncio.create_task(follow(run_id)) for run_id in run_ids for _ in range(per_run)]
    await asyncio.wait_for(all_open.wait(), timeout=300)
    opened_in = time.perf_counter() - started
    released_at = time.perf_counter()
    gate.released.set()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - released_at
    print(
        f"{runs * per_run} SSE streams on {runs} runs open in {opened_in:.2f} s; released "
        f"{threads} threads of queued runs"
    )
    _report(f"{runs * per_run} concurrent SSE streams: live event lag", lags)
    rss = _peak_rss_mb(pid)
    print(
        f"streams ended={ended}, all runs done {elapsed:.2f} s after release; server peak RSS "
        + (f"{rss:.0f} MB" if rss is not None else "n/a (external server)")
    )


async def main(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.0f} ms of CPU here")
    gate = _Gate()
    await gate.start()
    args.llm_base_url = f"http://127.0.0.1:{gate.port}/v1"
    with _server(args) as (url, key, pid):
        limits = httpx.Limits(max_connections=args.streams + 100, max_keepalive_connections=200)
        async with httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120, limits=limits
        ) as http:
            await bench_latency(http, 5)  # warm-up: imports, caches, first connections
            if args.single:
                await bench_latency(http, args.single)
            if args.burst:
                await bench_throughput(http, args.burst, pid)
            if args.streams:
                await bench_streams(http, gate, args.streams, args.per_run, args.threads, pid)
            rss = _peak_rss_mb(pid)
            if rss is not None:
                print(f"server peak RSS over the whole bench: {rss:.0f} MB")
    await gate.stop()
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
    parser.add_argument(
        "--threads", type=int, default=16, help="threads the streamed runs queue in (16)"
    )
    parser.add_argument("--concurrency", type=int, default=64, help="worker concurrency (64)")
    args = parser.parse_args()
    if args.url and not args.key:
        parser.error("--url needs --key")
    if args.url and not args.url.startswith(("http://127.0.0.1", "http://localhost")):
        parser.error("benchmarks only target loopback")
    return args


if __name__ == "__main__":
    asyncio.run(main(_parse()))
