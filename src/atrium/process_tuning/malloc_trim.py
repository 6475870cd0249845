"""Hand the pages glibc's malloc keeps free back to the system, every few seconds.

glibc returns memory to the system on its own only from the top of a heap: pages freed between
live chunks stay resident. `malloc_trim(0)` releases every whole free page of every arena
(`madvise(MADV_DONTNEED)`); the chunks stay free for reuse, and a page touched again costs one
page fault. About 0.2 ms of CPU a call. Under steady load the free chunks are small (a few
hundred bytes to a few KB between live ones), so it releases little there and does not lower
the RSS slope; it is for whatever leaves whole pages free (docs/decisions/0012-malloc-trim.md).

Only where the C library is glibc: elsewhere (musl, macOS) nothing starts.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)


def glibc_malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None when the process does not run on glibc."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return None
        function = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError, ValueError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    trim: Callable[[int], int] = function
    return trim


class MallocTrimmer:
    """A daemon thread that calls `malloc_trim(0)` every `interval` seconds.

    A thread, not an event-loop callback: ctypes releases the GIL around the call, so the
    loop goes on while glibc walks its free chunks (a few milliseconds; each arena is locked
    only while it is trimmed). `calls` and `cpu_seconds` (the thread's own CPU time in the
    calls) are for diagnostics.
    """

    def __init__(self, trim: Callable[[int], int], interval: float) -> None:
        self._trim = trim
        self._interval = interval
        self._stopped = threading.Event()
        self.calls = 0
        self.cpu_seconds = 0.0
        self._thread = threading.Thread(target=self._run, name="malloc-trim", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            started = time.thread_time()
            self._trim(0)
            self.cpu_seconds += time.thread_time() - started
            self.calls += 1


# The process's trimmer, for diagnostics (bench/traced_serve.py reports its calls and CPU).
active: MallocTrimmer | None = None


def start_malloc_trim(interval: float) -> MallocTrimmer | None:
    """Start trimming every `interval` seconds (0: never); None when off or not on glibc."""
    global active
    if interval <= 0:
        return None
    trim = glibc_malloc_trim()
    if trim is None:
        logger.debug("malloc_trim: not glibc, nothing to trim")
        return None
    active = MallocTrimmer(trim, interval)
    active.start()
    return active
