"""CPU per run of `Runtime.execute` on a streaming model, text coalescing windows alternated.

No HTTP server, no database: the runtime of this process against `slow_llm.py` (its own
process, `--chunks` text chunks over `--latency` seconds), `--runs` runs at once per figure, a
sink that only counts the text deltas it is handed, each window of `--windows` in turn for
`--rounds` rounds (alternating, so a shared machine's load falls on each alike). Prints CPU per
run in ms and in calibrations (`sum(range(10**6))`), and the text deltas per run the runtime
handled (docs/decisions/0010-stream-coalescing-window.md).

    .venv/bin/python bench/coalesce_bench.py --windows 0,200,300
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time

from agent_loop_bench import _NullSink  # this folder: a script's own directory
from harness import calibration_ms, slow_llm

from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.executor import RunSpec, Runtime
from atrium.settings import Settings


class _CountingSink(_NullSink):
    def __init__(self) -> None:
        self.texts = 0

    def append_text(self, text: str) -> None:
        self.texts += 1


async def _burst(runtime: Runtime, runs: int) -> float:
    """Text deltas per run, after `runs` runs at once."""
    sinks = [_CountingSink() for _ in range(runs)]
    config = {"model": "openai-compatible:bench"}

    async def one(index: int) -> None:
        spec = RunSpec(run_id=f"run_{index}", prompt="hello", config=config, history=[])
        outcome = await runtime.execute(spec, sinks[index], RunCancellation())
        assert outcome.status == "completed", outcome

    await asyncio.gather(*(one(index) for index in range(runs)))
    return sum(sink.texts for sink in sinks) / runs


async def main(url: str, windows: list[int], runs: int, rounds: int) -> None:
    runtimes = {
        window: Runtime(Settings(_env_file=None, llm_base_url=url, stream_coalesce_ms=window))  # type: ignore[call-arg]
        for window in windows
    }
    for runtime in runtimes.values():
        await _burst(runtime, 20)  # warm-up: imports, validators, connections
    for _ in range(rounds):
        for window, runtime in runtimes.items():
            started, wall = time.process_time(), time.monotonic()
            texts = await _burst(runtime, runs)
            cpu = (time.process_time() - started) / runs * 1000
            calibration = calibration_ms()
            print(
                f"window {window:4d} ms: {cpu:6.2f} ms CPU per run = {cpu / calibration:.2f} cal "
                f"(calibration {calibration:.1f} ms), wall {time.monotonic() - wall:.1f} s, "
                f"{texts:.1f} text deltas per run, load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for runtime in runtimes.values():
        await runtime.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--windows", default="0,200", help="windows in ms (0,200)")
    parser.add_argument("--runs", type=int, default=100, help="runs at once per figure (100)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (2)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per answer (2)")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per answer (20)")
    args = parser.parse_args()
    with slow_llm(latency=args.latency, chunks=args.chunks) as base_url:
        asyncio.run(
            main(base_url, [int(w) for w in args.windows.split(",")], args.runs, args.rounds)
        )
