"""The test suite's own cost: CPU (user + sys) of its whole process tree, wall time, calibration.

    .venv/bin/python bench/suite_cost.py                 # the README's test command (pytest)
    .venv/bin/python bench/suite_cost.py -- -n 0 tests/runs

Every process the suite starts counts: xdist's workers, the servers and CLI processes the tests
start, and those forked from tests/processes.py's forkserver, which the forkserver reaps itself
and which outlive their worker's accounting. This process makes itself the tree's "child
subreaper" (Linux prctl), so an orphan is re-parented to it, not to init, and its CPU reaches
this process's RUSAGE_CHILDREN when reaped: `time make test` misses the orphans' share.
PostgreSQL's and Redis's server processes are not in the tree (they serve the suite, but are
not started by it) and are not counted.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time

from harness import calibration_ms

_PR_SET_CHILD_SUBREAPER = 36


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pytest_args", nargs="*", help="after `--`: arguments for pytest")
    args = parser.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    before = calibration_ms()
    started, cpu = time.monotonic(), _children_cpu()
    pytest = os.path.join(os.path.dirname(sys.executable), "pytest")
    code = subprocess.call([pytest, *args.pytest_args])
    while True:  # the orphans re-parented to this process
        try:
            os.wait()
        except ChildProcessError:
            break
    cpu, wall = _children_cpu() - cpu, time.monotonic() - started
    after = calibration_ms()
    mean = (before + after) / 2
    print(
        f"suite cost: {cpu:.1f} s CPU (user+sys, whole tree) = {cpu * 1000 / mean:,.0f} "
        f"calibrations, {wall / 60:.1f} min wall, exit {code}; calibration {before:.1f} ms "
        f"before, {after:.1f} ms after"
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
