"""Steady traffic with retention on: the SQLite file stays flat, and run creation stays quick.

A real `atrium serve` (temp SQLite file, in-process worker, offline model) gets `--cycles`
rounds of `--runs` runs, each in a new thread with a long prompt, awaited to the end. With
retention on, threads older than `--keep` seconds go every second
(`ATRIUM_RETENTION_DAYS=keep/86400`, `ATRIUM_RETENTION_INTERVAL_SECONDS=1`); with it off the
file only grows. After each round: the database file's size (with its WAL), and the round's
create latencies, whose p99 shows what the purge batches cost the writers beside them.

    .venv/bin/python bench/retention_bench.py
    .venv/bin/python bench/retention_bench.py --cycles 30 --runs 200 --keep 5
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time
from pathlib import Path

import httpx
from harness import atrium_serve, calibration_ms, percentile

RUNS = "/api/v1/public/agent/runs"


def _size_mb(workdir: Path) -> float:
    return sum(path.stat().st_size for path in workdir.glob("atrium.db*")) / 2**20


async def _round(http: httpx.AsyncClient, runs: int, prompt: str) -> list[float]:
    """`runs` runs at once; the create latencies in ms, once every run has finished."""
    latencies: list[float] = []

    async def one() -> str:
        started = time.perf_counter()
        response = await http.post(
            RUNS, json={"prompt": prompt}, headers={"Idempotency-Key": secrets.token_hex(8)}
        )
        latencies.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        run_id: str = response.json()["run_id"]
        return run_id

    ids = await asyncio.gather(*(one() for _ in range(runs)))
    for run_id in ids:
        for _ in range(6000):  # five minutes
            if await _finished(http, run_id):
                break
            await asyncio.sleep(0.05)
    return latencies


async def _finished(http: httpx.AsyncClient, run_id: str) -> bool:
    status = (await http.get(f"{RUNS}/{run_id}")).json()["status"]
    return status in {"completed", "failed", "cancelled"}


async def _traffic(url: str, key: str, workdir: Path, args: argparse.Namespace) -> None:
    prompt = "Summarise this. " + "lorem ipsum dolor sit amet " * 80  # ~2 KB per prompt
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        for cycle in range(1, args.cycles + 1):
            latencies = await _round(http, args.runs, prompt)
            await asyncio.sleep(args.pause)
            print(
                f"  cycle {cycle:>3}: file {_size_mb(workdir):7.2f} MB, create p50 "
                f"{percentile(latencies, 0.5):6.1f} ms p99 {percentile(latencies, 0.99):6.1f} ms",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--runs", type=int, default=100, help="runs (threads) per cycle")
    parser.add_argument("--keep", type=float, default=4.0, help="retention, in seconds")
    parser.add_argument("--pause", type=float, default=1.0, help="seconds between cycles")
    args = parser.parse_args()
    print(f"calibration: sum(range(10**6)) {calibration_ms():.1f} ms")
    for label, days in (("retention off", "0"), ("retention on", str(args.keep / 86400))):
        print(f"{label} ({args.cycles} cycles of {args.runs} runs):")
        settings = {"retention_days": days, "retention_interval_seconds": "1"}
        with atrium_serve(settings=settings) as server:
            asyncio.run(_traffic(server.url, server.key, server.workdir, args))
    print(f"calibration: sum(range(10**6)) {calibration_ms():.1f} ms")


if __name__ == "__main__":
    main()
