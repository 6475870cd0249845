"""CPU of a process's start: `import atrium.app`, and `atrium serve` from launch until `/healthz`
answers (docs/decisions/0015-imports-on-first-use.md).

Every server and worker process pays it at every start, the test suite's dozens of
subprocesses too; most of it is imports. Each figure is user + system CPU of the child process
(from the kernel's counters), the median of `--repeat` starts, printed beside the calibration
taken just before it. `atrium serve` starts on a fresh SQLite file each time (so its migrations
and first key are included), with the in-process worker and without it (`--no-worker`).

    .venv/bin/python bench/startup_bench.py
    .venv/bin/python bench/startup_bench.py --importtime 25      # and where the import goes
    .venv/bin/python bench/startup_bench.py --src /tmp/other/src  # another checkout's code
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from harness import (  # this folder
    ATRIUM,
    Meter,
    atrium_env,
    calibration_ms,
    free_port,
    stop,
    wait_until_healthy,
)


def _env(src: str | None, **variables: str) -> dict[str, str]:
    env = atrium_env(**variables)
    if src:  # ahead of the installed (editable) atrium
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def import_cpu(src: str | None, module: str) -> float:
    """CPU seconds of a new interpreter that imports `module` and exits."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", f"import {module}"], env=_env(src), check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def serve_cpu(src: str | None, *flags: str) -> float:
    """CPU seconds of `atrium serve` from launch until its `/healthz` first answers 200."""
    workdir = Path(tempfile.mkdtemp(prefix="atrium-startup-"))
    port = free_port()
    env = _env(
        src,
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{workdir / 'atrium.db'}",
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
    )
    command = [ATRIUM, "serve", "--port", str(port), *flags]
    with (workdir / "server.log").open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        meter = Meter(process.pid)
        # A short pause between looks: the figure is the CPU until the first answer.
        wait_until_healthy(process, f"http://127.0.0.1:{port}", workdir / "server.log", pause=0.02)
        return meter.cpu_seconds()
    finally:
        stop(process)
        shutil.rmtree(workdir, ignore_errors=True)


def measure(name: str, repeat: int, take: Callable[[], float]) -> None:
    figures = []
    for _ in range(repeat):
        calibration = calibration_ms()
        seconds = take()
        figures.append((seconds, calibration))
        print(f"  {name}: {seconds * 1000:7.0f} ms CPU (calibration {calibration:.1f} ms)")
    seconds, calibration = sorted(figures)[len(figures) // 2]
    print(
        f"{name}: median {seconds * 1000:.0f} ms CPU = {seconds * 1000 / calibration:.0f} cal "
        f"(calibration {calibration:.1f} ms)",
        flush=True,
    )


def importtime(src: str | None, top: int) -> None:
    """The `top` imports of `import atrium.app` by cumulative time (`python -X importtime`)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import atrium.app"],
        env=_env(src),
        capture_output=True,
        text=True,
        check=True,
    )
    rows = re.findall(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", done.stderr)
    ranked = sorted(rows, key=lambda row: -int(row[0]))[:top]
    print(f"import atrium.app, top {top} by cumulative µs (calibration {calibration_ms():.1f} ms):")
    for cumulative, indent, module in ranked:
        print(f"  {int(cumulative):>10} {indent}{module}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", help="measure the atrium package under this folder instead")
    parser.add_argument("--importtime", type=int, default=0, metavar="TOP")
    args = parser.parse_args()
    src = str(Path(args.src).resolve()) if args.src else None
    print(f"load average {os.getloadavg()[0]:.1f}; code: {src or 'installed'}")
    if args.importtime:
        importtime(src, args.importtime)
    measure("import atrium.app", args.repeat, lambda: import_cpu(src, "atrium.app"))
    measure("atrium serve → /healthz", args.repeat, lambda: serve_cpu(src))
    api_only = "atrium serve --no-worker → /healthz"
    measure(api_only, args.repeat, lambda: serve_cpu(src, "--no-worker"))


if __name__ == "__main__":
    main()
