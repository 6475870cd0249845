"""What the durable mark of an MCP call costs: one commit before each call leaves.

`atrium serve --no-worker` and one `atrium worker` on a fresh SQLite file, the MCP server of
`mcp_echo.py` in a process of its own. Runs of the offline model, each making `--calls` MCP
calls, are executed one at a time; printed per MCP call: the worker's CPU and the run's
duration (its own `started_at` to `finished_at`), with the mark committed before each call
("mark") and, alternated with it in the same minutes, with `RunRecorder.persist` made a no-op
in the worker ("none": the call's `tool.called` event goes out with the next flush, as it did
without the mark). Calibration: `sum(range(10**6))` CPU time (docs/decisions/README.md).
See docs/decisions/0040-mcp-calls-at-most-once.md.

    .venv/bin/python bench/mcp_call_mark_bench.py --runs 30 --calls 10 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import IO

import httpx
from harness import (
    ATRIUM,
    RUNS,
    Meter,
    calibration_ms,
    mcp_echo,
    migrate_and_key,
    sqlite_env,
    stop,
    wait_until_healthy,
)

# The worker, with the mark's commit made a no-op when BENCH_NO_MARK is set.
_WORKER = """
import os, sys
if os.environ.get("BENCH_NO_MARK"):
    from atrium.worker.recorder import RunRecorder

    async def _persist(self):
        pass

    RunRecorder.persist = _persist
sys.argv = ["atrium", "worker"]
from atrium.cli import app
app()
"""


def _start(command: list[str], env: dict[str, str], log: IO[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


async def _one_run(http: httpx.AsyncClient, agent_id: str, prompt: str) -> float:
    """Create a run, wait for it; its duration in seconds (server timestamps)."""
    created = await http.post(RUNS, json={"prompt": prompt, "agent_id": agent_id})
    created.raise_for_status()
    run_id = created.json()["run_id"]
    while True:
        run = (await http.get(f"{RUNS}/{run_id}")).json()
        if run.get("finished_at"):
            assert run["status"] == "completed", run
            started = datetime.fromisoformat(run["started_at"])
            return (datetime.fromisoformat(run["finished_at"]) - started).total_seconds()
        await asyncio.sleep(0.01)


async def _variant(
    env: dict[str, str], workdir: Path, url: str, key: str, agent_id: str, args: argparse.Namespace
) -> tuple[float, float]:
    """CPU ms and wall ms per MCP call of the worker, over `args.runs` runs."""
    prompt = "\n".join(f'call bench_echo {{"text": "call {n}"}}' for n in range(args.calls))
    with (workdir / "worker.log").open("a") as log:
        worker = _start([sys.executable, "-c", _WORKER], env, log)
        try:
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30
            ) as http:
                for _ in range(3):  # warm-up: imports, the MCP session, caches
                    await _one_run(http, agent_id, prompt)
                meter = Meter(worker.pid)
                before = meter.cpu_seconds()
                durations = [await _one_run(http, agent_id, prompt) for _ in range(args.runs)]
                cpu = meter.cpu_seconds() - before
        finally:
            stop(worker)
    calls = args.runs * args.calls
    return cpu / calls * 1000, statistics.median(durations) / args.calls * 1000


async def main(args: argparse.Namespace) -> None:
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.1f} ms of CPU")
    # Polled often: the API and the worker share no broker, and runs go one at a time.
    settings = {"allow_private_targets": "true", "run_poll_seconds": "0.02"}
    workdir, port, env = sqlite_env("atrium-mark-bench-", settings)
    key = migrate_and_key(env)
    url = f"http://127.0.0.1:{port}"
    with (workdir / "api.log").open("w") as api_log, mcp_echo() as mcp_url:
        api = _start([ATRIUM, "serve", "--no-worker", "--port", str(port)], env, api_log)
        try:
            wait_until_healthy(api, url, workdir / "api.log")
            async with httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {key}"}
            ) as http:
                tool = {"type": "mcp", "server_label": "bench", "server_url": mcp_url}
                body = {"name": "bench", "config": {"model": "atrium:offline", "tools": [tool]}}
                agent = await http.post("/v1/agents", json=body)
                agent.raise_for_status()
                agent_id = agent.json()["agent_id"]
            results: dict[str, list[tuple[float, float]]] = {"mark": [], "none": []}
            for _ in range(args.rounds):
                for name in ("none", "mark"):
                    variant_env = {**env, **({"BENCH_NO_MARK": "1"} if name == "none" else {})}
                    figures = await _variant(variant_env, workdir, url, key, agent_id, args)
                    results[name].append(figures)
                    print(f"{name}: {figures[0]:.2f} ms CPU, {figures[1]:.2f} ms wall per call")
        finally:
            stop(api)
    for name, figures in results.items():
        cpu = statistics.median(each[0] for each in figures)
        wall = statistics.median(each[1] for each in figures)
        print(f"median {name}: {cpu:.2f} ms CPU, {wall:.2f} ms wall per MCP call")
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.1f} ms of CPU")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
