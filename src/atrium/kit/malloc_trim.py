"""Give the C allocator's free pages back to the system now and then (glibc only).

A long-running process frees as much as it allocates, but glibc keeps freed chunks inside its
heaps (one per thread that allocated: the SQLite threads, the event loop) and returns a page only
when the top of a heap is free. Under steady traffic the free chunks end up scattered, and the
resident size creeps up though nothing live grows (`bench/soak.py`: tracemalloc flat, RSS
+20-30 MB an hour). `malloc_trim(0)` walks every heap and releases the whole free pages inside
them too. It runs in a thread of its own: ctypes releases the GIL for the call, so the event
loop is not paused while the allocator's heaps are walked.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("atrium.memory")


def _malloc_trim() -> Callable[[], int] | None:
    """glibc's `malloc_trim(0)`, or None where there is none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim = ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return lambda: int(trim(0))


@dataclass(frozen=True, slots=True)
class Trimming:
    thread: threading.Thread
    stopping: threading.Event

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()


def start_trimming(every_seconds: float) -> Trimming | None:
    """A daemon thread calling `malloc_trim(0)` every `every_seconds` (0: none). Processes
    leave it running until they exit."""
    trim = _malloc_trim()
    if trim is None or every_seconds <= 0:
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_seconds):
            try:
                trim()
            except Exception:  # pragma: no cover - the call itself cannot raise
                log.exception("malloc_trim failed")
                return

    thread = threading.Thread(target=loop, name="atrium-malloc-trim", daemon=True)
    thread.start()
    return Trimming(thread, stop)
