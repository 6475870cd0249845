"""Many runs waiting on a streaming model, each followed live: `atrium serve` on its defaults.

Starts the OpenAI-compatible server of `slow_llm.py` on loopback (each answer streams
`--chunks` pieces over `--latency` seconds; its own process, so its CPU is not counted), then
`atrium serve` with default settings but for a fresh SQLite file in a temp dir and
`ATRIUM_LLM_BASE_URL` pointing at that model server, and an agent whose model is
`openai-compatible:bench`. It submits `--runs` runs at once through the API, one SSE follower
per run (a follower refused a stream polls the run every 0.5 s instead, as a client would),
and prints:

- wall time from the first create to the last terminal event seen, create→done p50/p95;
- the server's CPU per run, in ms and in calibrations (`sum(range(10**6))` CPU time, taken in
  the same minute), from the process tree's own counters (psutil), and its peak RSS;
- events per run, 429s (refused creates or streams), runs not completed, followers that did
  not see their terminal event.

The agent has no tools, as in the target workload (`--tools default`: the server's three
artifact tools, which every request then describes to the model). `--offline` submits the burst
with the built-in `atrium:offline` model instead (no model server; the agent has the default
tools, so each run writes an artifact, as in the runs issue's burst). `--profile FILE` samples
the server with py-spy during the burst and prints the shares. `--set NAME=VALUE` changes a
setting (for comparisons; the targets are on the defaults).

    .venv/bin/python bench/streaming_bench.py                      # 1,000 runs, 2 s, 20 chunks
    .venv/bin/python bench/streaming_bench.py --runs 500 --offline
    .venv/bin/python bench/streaming_bench.py --profile /tmp/streaming.txt
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from harness import (
    RUNS,
    TERMINAL,
    Meter,
    atrium_cluster,
    atrium_serve,
    bench_agent,
    calibration_ms,
    new_idempotency_key,
    percentile,
    profile_summary,
    py_spy,
    slow_llm,
    sse_frames,
    stamp,
)
from runs_bench import runs_of

_POLL_SECONDS = 0.5


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # create → terminal seen, seconds
    events: list[int] = field(default_factory=list)  # frames each follower saw
    refused: int = 0  # 429s: creates or streams
    polled: int = 0  # followers that fell back to polling
    # Streams resumed, by the error (none expected: see `_burst_limits`).
    reconnects: dict[str, int] = field(default_factory=dict)
    # 408s: on a starved machine this client's loop can take longer than the server's head
    # timeout between opening a connection and sending its request; retried.
    timeouts: int = 0
    busy: int = 0  # 503 BUSY (no database connection free in time): retried after Retry-After
    unfinished: int = 0  # followers that never saw their run end
    statuses: dict[str, int] = field(default_factory=dict)
    last_done: float = 0.0
    run_ids: list[str] = field(default_factory=list)


async def _create(http: httpx.AsyncClient, agent_id: str, index: int, tally: Tally) -> str:
    headers = new_idempotency_key()  # a retried create (dropped connection) is the same run
    for attempt in range(20):
        try:
            response = await http.post(
                RUNS, json={"prompt": f"burst {index}", "agent_id": agent_id}, headers=headers
            )
        except httpx.TransportError:
            if attempt == 19:
                raise
            continue
        if response.status_code == 429:
            tally.refused += 1
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        if response.status_code == 408:  # this client's own loop lagged between connect and send
            tally.timeouts += 1
            continue
        if response.status_code == 503:
            tally.busy += 1
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        response.raise_for_status()
        run_id: str = response.json()["run_id"]
        return run_id
    raise RuntimeError("create refused 20 times")


async def _follow(http: httpx.AsyncClient, run_id: str, tally: Tally) -> str | None:
    """The run's terminal event kind, seen on its SSE stream (None: refused a stream). A
    dropped connection is resumed after the last event seen, as an EventSource would."""
    seen, last_id = 0, None
    for _attempt in range(10):
        headers = {"Last-Event-ID": last_id} if last_id else {}
        try:
            async with http.stream("GET", f"{RUNS}/{run_id}/events", headers=headers) as response:
                if response.status_code == 429:
                    tally.refused += 1
                    return None
                if response.status_code == 408:  # see `_create`
                    tally.timeouts += 1
                    continue
                if response.status_code == 503:  # see `_create`
                    tally.busy += 1
                    await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                    continue
                response.raise_for_status()
                async for _arrived, frame in sse_frames(response):
                    seen += 1
                    last_id = frame.get("id", last_id)
                    if frame.get("event") in TERMINAL:
                        tally.events.append(seen)
                        return str(frame["event"])
        except httpx.TransportError as exc:
            name = type(exc).__name__
            tally.reconnects[name] = tally.reconnects.get(name, 0) + 1
    tally.events.append(seen)
    return "ended without a terminal event"


async def _poll(http: httpx.AsyncClient, run_id: str) -> str:
    while True:
        run = (await http.get(f"{RUNS}/{run_id}")).json()
        if run.get("status") in {"completed", "failed", "cancelled"}:
            return f"run.{run['status']}"
        await asyncio.sleep(_POLL_SECONDS)


async def _one(http: httpx.AsyncClient, agent_id: str, index: int, tally: Tally) -> None:
    started = time.perf_counter()
    run_id = await _create(http, agent_id, index, tally)
    tally.run_ids.append(run_id)
    outcome = await _follow(http, run_id, tally)
    if outcome is None:
        tally.polled += 1
        outcome = await _poll(http, run_id)
    done = time.perf_counter()
    tally.latencies.append(done - started)
    tally.last_done = max(tally.last_done, done)
    tally.statuses[outcome] = tally.statuses.get(outcome, 0) + 1
    if outcome not in TERMINAL:
        tally.unfinished += 1


def _burst_limits(runs: int) -> httpx.Limits:
    """The burst client's pool: a connection per request, none kept alive for the next one.

    A kept-alive connection lets httpcore 1.0.9's pool close it under a request: a pass of
    `_assign_requests_to_connections` hands an idle connection to a queued request, which stays
    idle until that request's task runs; a later pass finds it expired (5 s idle, or closed by
    the server) and closes it, in a batch with others. Closing yields between connections, so
    the request starts on a connection later in the batch, then has it closed under its read:
    `ReadError` from anyio's `ClosedResourceError`, before the response (httpcore issue #1110,
    fix proposed in #1111, not released). Measured on PostgreSQL + Redis, 1,000 runs: 2
    `ReadError`s, and 2 connections closed by a pool pass while a request was on them (at
    positions 2 and 3 of batches of 13 and 11). With no connection kept alive, a finished
    response's connection is closed at once and never handed to a request, so the race has
    nothing to close; the cost is a connect per request on loopback.
    """
    return httpx.Limits(max_connections=runs * 2 + 10, max_keepalive_connections=0)


@dataclass
class Figures:
    """One burst's outcome, for the summary of the scale-out rounds."""

    wall: float
    server_runs_per_second: float
    cpu_ms_per_run: dict[str, float]
    calibration: float


async def burst(
    urls: list[str], key: str, processes: dict[str, list[int]], args: argparse.Namespace
) -> Figures:
    """Submit the burst through `urls` (round-robin per run: create and follow on one API
    process) and measure the processes of each group (`{"server": [pid]}`, or API and
    workers)."""
    meters = {group: [Meter(pid) for pid in pids] for group, pids in processes.items()}

    def cpu_each() -> dict[str, list[float]]:
        return {
            group: [m.cpu_seconds() for m in group_meters] for group, group_meters in meters.items()
        }

    limits = _burst_limits(args.runs)
    headers = {"Authorization": f"Bearer {key}"}
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                httpx.AsyncClient(base_url=url, headers=headers, timeout=300, limits=limits)
            )
            for url in urls
        ]

        def http(index: int) -> httpx.AsyncClient:
            return clients[index % len(clients)]

        model = "atrium:offline" if args.offline else "openai-compatible:bench"
        agent_id = await bench_agent(clients[0], model, tools=_tools(args))
        warm = Tally()  # imports, caches, the model client's first connections
        await asyncio.gather(*(_one(http(i), agent_id, i, warm) for i in range(args.warmup)))
        await asyncio.sleep(1)
        calibration = calibration_ms()
        tally = Tally()
        cpu_before = cpu_each()
        with py_spy(processes[next(iter(processes))][0], args.profile):
            started = time.perf_counter()
            await asyncio.gather(*(_one(http(i), agent_id, i, tally) for i in range(args.runs)))
            wall = tally.last_done - started
            cpu_after = cpu_each()
        calibration = min(calibration, calibration_ms())
        listed = await runs_of(clients[0], tally.run_ids)
        runs = [run for run in listed if run["finished_at"]]
        failures = [run.get("error") for run in listed if run["status"] == "failed"]
    spent_each = {
        group: [b - a for a, b in zip(cpu_before[group], cpu_after[group], strict=True)]
        for group in meters
    }
    spent = {group: sum(each) for group, each in spent_each.items()}
    total = sum(spent.values())
    per_run_ms = total / args.runs * 1000
    first = min(stamp(run["started_at"]) for run in runs)
    last = max(stamp(run["finished_at"]) for run in runs)
    server_rate = len(runs) / (last - first)
    model = "atrium:offline" if args.offline else f"{args.latency:g} s model, {args.chunks} chunks"
    tools = _tools(args)
    named = "default tools" if tools is None else ", ".join(tools) or "no tools"
    print(f"== {args.runs} runs at once ({model}, agent with {named}), one SSE follower each ==")
    print(f"calibration: sum(range(10**6)) = {calibration:.1f} ms of CPU (same minute)")
    print(
        f"wall, first create to last terminal event: {wall:.2f} s = {args.runs / wall:.1f} runs/s"
        f" (under shared-machine load {os.getloadavg()[0]:.1f})"
    )
    print(
        f"server side, first start to last finish: {last - first:.2f} s = "
        f"{server_rate:.1f} runs/s ({len(runs)} finished)"
    )
    print(
        f"create->done: p50 {percentile(tally.latencies, 0.5):.2f} s, "
        f"p95 {percentile(tally.latencies, 0.95):.2f} s, max {max(tally.latencies):.2f} s"
    )
    print(
        f"server CPU: {total:.2f} s = {per_run_ms:.1f} ms per run = "
        f"{per_run_ms / calibration:.2f} calibrations per run"
    )
    if len(spent) > 1:
        print(
            "  by process group: "
            + ", ".join(
                f"{group} {seconds:.2f} s = {seconds / args.runs * 1000:.1f} ms/run"
                for group, seconds in spent.items()
            )
        )
    # A group of several processes: how evenly the burst's work spread over them.
    spread = {group: each for group, each in spent_each.items() if len(each) > 1}
    if spread:
        print(
            "  CPU s by process: "
            + "; ".join(
                f"{group} " + " / ".join(f"{s:.2f}" for s in each) for group, each in spread.items()
            )
        )
    peaks = ", ".join(
        f"{group} " + "/".join(f"{m.peak_rss_mb():.0f}" for m in group_meters)
        for group, group_meters in meters.items()
    )
    print(f"peak RSS MB: {peaks}")
    events = statistics.fmean(tally.events) if tally.events else 0.0
    print(f"events per run (SSE frames seen): {events:.1f}")
    print(
        f"429 refusals: {tally.refused}; followers that polled: {tally.polled}; "
        f"stream reconnects: {sum(tally.reconnects.values())}"
        f"{f' {tally.reconnects}' if tally.reconnects else ''}; "
        f"408s retried: {tally.timeouts}; "
        f"503s retried: {tally.busy}; "
        f"without a terminal event: {tally.unfinished}; outcomes: {tally.statuses}",
        flush=True,
    )
    for error in failures:
        print(f"failed run: {error}")
    if args.profile:
        print(profile_summary(args.profile))
    return Figures(
        wall=wall,
        server_runs_per_second=server_rate,
        cpu_ms_per_run={group: seconds / args.runs * 1000 for group, seconds in spent.items()},
        calibration=calibration,
    )


def scale_out(args: argparse.Namespace, settings: dict[str, str]) -> None:
    """Rounds of the burst on PostgreSQL + Redis, each worker count of `--workers` in turn
    (the order alternates from round to round), a fresh database and processes for each."""
    counts = [int(count) for count in args.workers.split(",")]
    results: dict[int, list[Figures]] = {count: [] for count in counts}
    with contextlib.ExitStack() as stack:
        if not args.offline:
            base_url = stack.enter_context(slow_llm(latency=args.latency, chunks=args.chunks))
            settings.setdefault("llm_base_url", base_url)
        for round_ in range(args.rounds):
            for count in counts if round_ % 2 == 0 else counts[::-1]:
                print(
                    f"\n-- round {round_ + 1}: {args.apis} API process(es) (serve --no-worker), "
                    f"{count} worker process(es), PostgreSQL + Redis --",
                    flush=True,
                )
                with atrium_cluster(
                    postgres=args.postgres, redis=args.redis, apis=args.apis, settings=settings
                ) as cluster:
                    cluster.start_workers(count)
                    processes = {
                        "api": [process.pid for process in cluster.apis],
                        "workers": [process.pid for process in cluster.workers],
                    }
                    figures = asyncio.run(burst(cluster.urls, cluster.key, processes, args))
                results[count].append(figures)
    print("\n== summary: runs/s, wall (client) and server side (first start to last finish) ==")
    for count, rounds in results.items():
        walls = ", ".join(f"{args.runs / f.wall:.1f}" for f in rounds)
        sides = ", ".join(f"{f.server_runs_per_second:.1f}" for f in rounds)
        cal = ", ".join(f"{f.calibration:.1f}" for f in rounds)
        print(f"{count} worker(s): wall {walls}; server side {sides} (calibrations {cal} ms)")
    if len(counts) == 2:
        one, two = (results[count] for count in counts)
        wall = statistics.median(args.runs / f.wall for f in two) / statistics.median(
            args.runs / f.wall for f in one
        )
        side = statistics.median(f.server_runs_per_second for f in two) / statistics.median(
            f.server_runs_per_second for f in one
        )
        print(
            f"scaling {counts[0]} -> {counts[1]} workers (medians): wall {wall:.2f}x, "
            f"server side {side:.2f}x"
        )


def _tools(args: argparse.Namespace) -> list[str] | None:
    """The bench agent's tools: None for the server's default ones."""
    given = args.tools or ("default" if args.offline else "none")
    if given == "default":
        return None
    return [] if given == "none" else given.split(",")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1000, help="runs submitted at once (1000)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per answer (2)")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per answer (20)")
    parser.add_argument("--offline", action="store_true", help="the atrium:offline model")
    parser.add_argument(
        "--tools",
        help="the agent's tools: comma-separated names, 'none' or 'default' (the server's three "
        "artifact tools); default: none (the issue's workload), 'default' with --offline",
    )
    parser.add_argument("--warmup", type=int, default=20, help="runs before measuring (20)")
    parser.add_argument("--profile", type=Path, help="py-spy the server into this file")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting other than its default (name without ATRIUM_)",
    )
    parser.add_argument(
        "--postgres",
        help="scale out: a PostgreSQL server URL without a database name "
        "(postgresql+asyncpg://postgres@127.0.0.1:5432); a fresh database per burst",
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/5", help="scale out: Redis")
    parser.add_argument(
        "--workers", default="1,2", help="scale out: worker process counts to compare (1,2)"
    )
    parser.add_argument("--apis", type=int, default=1, help="scale out: API processes (1)")
    parser.add_argument("--rounds", type=int, default=3, help="scale out: rounds (3)")
    args = parser.parse_args()
    settings = dict(item.split("=", 1) for item in args.set)
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}")
    if args.postgres:
        scale_out(args, settings)
        print(f"load average after: {os.getloadavg()}")
        return
    with contextlib.ExitStack() as stack:
        if not args.offline:
            base_url = stack.enter_context(slow_llm(latency=args.latency, chunks=args.chunks))
            settings.setdefault("llm_base_url", base_url)
        server = stack.enter_context(atrium_serve(settings=settings))
        asyncio.run(burst([server.url], server.key, {"server": [server.pid]}, args))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
