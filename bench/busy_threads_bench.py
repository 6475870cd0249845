"""What a create with `if_busy` costs the API process, against `enqueue` (the write batcher).

A real `atrium serve` with no worker (SQLite file), so every run stays queued and its thread
busy. Per policy, `--creates` runs are posted one after another into one thread, the policies
taking turns round after round (same minutes); reported: the server's CPU per create (its
/proc/PID/stat) and the client's wall time per create.

- enqueue: the default; the run is queued behind the others (write batcher).
- reject: refused with 409 THREAD_BUSY (a transaction of its own, nothing written).
- interrupt: cancels the one queued run of the thread (the previous create's) and queues.

    .venv/bin/python bench/busy_threads_bench.py --creates 200 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from pathlib import Path

import httpx
from harness import atrium_serve, calibration_ms

RUNS = "/api/v1/public/agent/runs"
POLICIES = ("enqueue", "reject", "interrupt")
_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


async def _round(
    http: httpx.AsyncClient, url: str, key: str, pid: int, policy: str, creates: int
) -> tuple[float, float]:
    """(server CPU ms, wall ms) per create of `policy`, into a thread of its own."""
    headers = {"Authorization": f"Bearer {key}"}
    first = await http.post(url + RUNS, json={"prompt": "start"}, headers=headers)
    thread_id = first.json()["thread_id"]
    expected = 409 if policy == "reject" else 201
    cpu, wall = _cpu_seconds(pid), time.perf_counter()
    for index in range(creates):
        body = {"prompt": f"p{index}", "thread_id": thread_id, "if_busy": policy}
        response = await http.post(url + RUNS, json=body, headers=headers)
        assert response.status_code == expected, response.text
    return (
        (_cpu_seconds(pid) - cpu) * 1000 / creates,
        (time.perf_counter() - wall) * 1000 / creates,
    )


async def main(args: argparse.Namespace) -> None:
    with atrium_serve(settings={"run_worker": "false", "log_level": "WARNING"}) as server:
        results: dict[str, list[tuple[float, float]]] = {policy: [] for policy in POLICIES}
        async with httpx.AsyncClient(timeout=60) as http:
            for _ in range(args.rounds):
                for policy in POLICIES:
                    results[policy].append(
                        await _round(http, server.url, server.key, server.pid, policy, args.creates)
                    )
    print(f"calibration: {calibration_ms():.1f} ms")
    for policy, rounds in results.items():
        cpu = statistics.median(each[0] for each in rounds)
        wall = statistics.median(each[1] for each in rounds)
        print(f"{policy:9}: server CPU {cpu:.2f} ms/create, wall {wall:.2f} ms/create (median)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--creates", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
