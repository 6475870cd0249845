"""`ATRIUM_MALLOC_TRIM_SECONDS`: the long-running processes hand the pages glibc's malloc keeps
free back to the system (docs/decisions/0012-malloc-trim.md), and 0 turns that off.

Run in a subprocess: what is measured is the RSS of a process whose heap this test shapes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from atrium.process_tuning.malloc_trim import glibc_malloc_trim

# Fills glibc's main heap with 4,000-byte chunks (above pymalloc's 512, below glibc's mmap
# threshold), then frees 15 of every 16: ~37 MB of free chunks between live ones, which glibc
# does not return by itself (only the top of a heap is). Then starts the trimmer as
# `atrium serve` does, from the settings, and prints the RSS before and after a wait, in KiB,
# and how many trims ran.
_HEAP = """
import time
from atrium.process_tuning.malloc_trim import start_malloc_trim
from atrium.settings import Settings


def rss() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


blocks = [bytes(4000) for _ in range(10_000)]
kept = [block for index, block in enumerate(blocks) if index % 16 == 15]
del blocks
before = rss()
trimmer = start_malloc_trim(Settings().malloc_trim_seconds)
time.sleep(0.5)
print(before, rss(), trimmer.calls if trimmer else 0)
"""


def _trimmed(seconds: str) -> tuple[int, int, int]:
    env = {**os.environ, "ATRIUM_MALLOC_TRIM_SECONDS": seconds}
    done = subprocess.run(
        [sys.executable, "-c", _HEAP],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    before, after, calls = map(int, done.stdout.split())
    return before, after, calls


glibc = pytest.mark.skipif(glibc_malloc_trim() is None, reason="glibc only")


@glibc
def test_free_heap_pages_go_back_to_the_system() -> None:
    before, after, calls = _trimmed("0.05")
    assert calls >= 1
    assert before - after > 20_000, (before, after)  # KiB


@glibc
def test_zero_turns_the_trim_off() -> None:
    before, after, calls = _trimmed("0")
    assert calls == 0
    assert before - after < 5_000, (before, after)
