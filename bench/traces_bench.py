"""What exporting traces costs the process that executes runs.

A real `atrium serve` (temp SQLite file, in-process worker, offline model) runs `--runs` runs
of an agent whose prompt makes one tool call (`write_artifact`, two model requests), each
awaited, with `ATRIUM_OTLP_ENDPOINT` unset or pointing at `examples/otlp_receiver.py` (a
process of its own). Rounds alternate the two; the figure is the server's CPU per run (user +
system, median of the rounds), with the machine's calibration beside it. A round with the
endpoint also checks that every run's span arrived.

    .venv/bin/python bench/traces_bench.py
    .venv/bin/python bench/traces_bench.py --rounds 5 --runs 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from harness import Meter, atrium_serve, calibration_ms, free_port

RUNS = "/api/v1/public/agent/runs"
RECEIVER = Path(__file__).parents[1] / "examples" / "otlp_receiver.py"


@contextlib.contextmanager
def receiver(log: Path) -> Iterator[str]:
    port = free_port()
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, str(RECEIVER), "--port", str(port)], stdout=out)
    try:
        deadline = time.monotonic() + 30
        while "listening" not in log.read_text():
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the receiver did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


async def _round(url: str, key: str, runs: int, meter: Meter) -> float:
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30
    ) as http:
        before = meter.cpu_seconds()
        for index in range(runs):
            run = (await http.post(RUNS, json={"prompt": f"note {index}"})).json()
            for _ in range(30_000):  # five minutes
                got = (await http.get(f"{RUNS}/{run['run_id']}")).json()
                if got["status"] == "completed":
                    break
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # the last exports
        return (meter.cpu_seconds() - before) * 1000 / runs


def _measure(runs: int, endpoint: str | None) -> float:
    settings = {"otlp_endpoint": endpoint} if endpoint else {}
    with atrium_serve(settings=settings) as server:
        meter = Meter(server.pid)
        asyncio.run(_round(server.url, server.key, 5, meter))  # warm: imports, first model
        return asyncio.run(_round(server.url, server.key, runs, meter))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=100)
    options = parser.parse_args()
    off: list[float] = []
    on: list[float] = []
    log = Path("/tmp") / f"atrium-traces-bench-{free_port()}.log"
    with receiver(log) as endpoint:
        for _ in range(options.rounds):
            off.append(_measure(options.runs, None))
            before = log.read_text().count("\ninvoke_agent ")
            on.append(_measure(options.runs, endpoint))
            sent = log.read_text().count("\ninvoke_agent ") - before
            assert sent == options.runs + 5, f"{sent} runs' spans arrived"
    print(f"calibration {calibration_ms():.1f} ms")
    print(f"server CPU per run, endpoint unset: {statistics.median(off):.2f} ms  {off}")
    print(f"server CPU per run, endpoint set:   {statistics.median(on):.2f} ms  {on}")


if __name__ == "__main__":
    main()
