"""The API side of a run alone: CPU per request of `atrium serve --no-worker` on its defaults.

What a client following its own runs costs the API process, without the run's execution: the
server is started with `ATRIUM_RUN_WORKER=false` (fresh SQLite file), so runs stay queued and
nothing but the API spends CPU. Three phases, each `--requests` requests, `--concurrency` at
once, the server's CPU from its own counters (psutil) around each phase:

- `create`: `POST /agent/runs` with an `Idempotency-Key` each (auth, rate limit, idempotency
  lookup, agent lookup, the batched insert, the 201 body);
- `stream`: `GET /agent/runs/{id}/events` as SSE: the stream's setup, the replay of the queued
  run's `run.queued` event, and its end when the client closes after that frame;
- `poll`: `GET /agent/runs/{id}` (a follower that polls).

`--rounds` repeats the phases; the medians are printed with the calibration of the same minute.
`--profile FILE` samples the server with py-spy during the phases.

    .venv/bin/python bench/api_bench.py
    .venv/bin/python bench/api_bench.py --requests 2000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import httpx
from harness import (
    RUNS,
    Meter,
    atrium_serve,
    calibration_ms,
    new_idempotency_key,
    profile_summary,
    py_spy,
    sse_frames,
)

T = TypeVar("T")


async def _retried(call: Callable[[], Awaitable[T]]) -> T:
    """`call` again when a kept-alive connection was dropped under it (a create carries its
    Idempotency-Key, so a retry is the same run)."""
    for attempt in range(5):
        try:
            return await call()
        except httpx.TransportError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


async def _create(http: httpx.AsyncClient, index: int) -> str:
    headers = new_idempotency_key()

    async def once() -> str:
        response = await http.post(RUNS, json={"prompt": f"api {index}"}, headers=headers)
        response.raise_for_status()
        run_id: str = response.json()["run_id"]
        return run_id

    return await _retried(once)


async def _stream(http: httpx.AsyncClient, run_id: str) -> None:
    async def once() -> None:
        async with http.stream("GET", f"{RUNS}/{run_id}/events") as response:
            response.raise_for_status()
            async for _arrived, _frame in sse_frames(response):
                return  # the replayed run.queued: close the stream

    await _retried(once)


async def _poll(http: httpx.AsyncClient, run_id: str) -> None:
    async def once() -> None:
        (await http.get(f"{RUNS}/{run_id}")).raise_for_status()

    await _retried(once)


async def _phase(
    meter: Meter, concurrency: int, work: list[Callable[[], Awaitable[object]]]
) -> tuple[float, list[object]]:
    """Server CPU in ms per request of `work`, run `concurrency` at once, and the results."""
    gate = asyncio.Semaphore(concurrency)

    async def one(call: Callable[[], Awaitable[object]]) -> object:
        async with gate:
            return await call()

    before = meter.cpu_seconds()
    results = await asyncio.gather(*(one(call) for call in work))
    spent = meter.cpu_seconds() - before
    return spent / len(work) * 1000, list(results)


async def main(args: argparse.Namespace) -> None:
    with atrium_serve(settings={"run_worker": "false"}) as server:
        meter = Meter(server.pid)
        limits = httpx.Limits(max_connections=args.concurrency + 10)
        headers = {"Authorization": f"Bearer {server.key}"}
        figures: dict[str, list[float]] = {"create": [], "stream": [], "poll": []}
        calibrations: list[float] = []
        async with httpx.AsyncClient(
            base_url=server.url, headers=headers, timeout=120, limits=limits
        ) as http:
            warm = [await _create(http, -i) for i in range(20)]  # imports, caches, connections
            for run_id in warm:
                await _stream(http, run_id)
                await _poll(http, run_id)
            with py_spy(server.pid, args.profile):
                for _round in range(args.rounds):
                    calibrations.append(calibration_ms())
                    n = args.requests
                    create_ms, run_ids = await _phase(
                        meter,
                        args.concurrency,
                        [lambda i=i: _create(http, i) for i in range(n)],
                    )
                    stream_ms, _ = await _phase(
                        meter,
                        args.concurrency,
                        [lambda r=r: _stream(http, str(r)) for r in run_ids],
                    )
                    poll_ms, _ = await _phase(
                        meter, args.concurrency, [lambda r=r: _poll(http, str(r)) for r in run_ids]
                    )
                    calibrations.append(calibration_ms())
                    figures["create"].append(create_ms)
                    figures["stream"].append(stream_ms)
                    figures["poll"].append(poll_ms)
                    print(
                        f"round {_round + 1}: create {create_ms:.2f} ms, stream {stream_ms:.2f} "
                        f"ms, poll {poll_ms:.2f} ms of server CPU per request "
                        f"(calibration {min(calibrations[-2:]):.1f} ms)",
                        flush=True,
                    )
    calibration = statistics.median(calibrations)
    print(
        f"== medians of {args.rounds} rounds, {args.requests} requests each, "
        f"{args.concurrency} at once; calibration {calibration:.1f} ms (median) =="
    )
    for phase, values in figures.items():
        median = statistics.median(values)
        print(f"{phase}: {median:.2f} ms = {median / calibration:.3f} cal per request")
    total = sum(statistics.median(values) for values in figures.values())
    print(f"create + stream: {total - statistics.median(figures['poll']):.2f} ms per run")
    if args.profile:
        print(profile_summary(args.profile))


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=1000, help="requests per phase (1000)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests at once (50)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the phases (3)")
    parser.add_argument("--profile", type=Path, help="py-spy the server into this file")
    return parser.parse_args()


if __name__ == "__main__":
    asyncio.run(main(_parse()))
