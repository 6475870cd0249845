"""`atrium …` with a SIGUSR1 handler that starts tracemalloc (the first signal) and then writes
a heap snapshot (each later one): what the soak uses to find what accumulates
(`bench/soak.py --tracemalloc DIR`). Bench only: the production entry points never trace nor
install the handler. Tracing starts after the warm-up, so start-up is not slowed and a snapshot
holds only what was allocated since and is still alive.

    python bench/traced_serve.py DIR serve --port 8000
    kill -USR1 <pid>        # starts tracing; writes DIR/snapshot-0.done
    kill -USR1 <pid>        # writes DIR/snapshot-1.pickle, then DIR/snapshot-1.done

Tracing costs CPU and memory of its own, so the RSS of a traced soak is not the figure to
report; the snapshot diffs are.

SIGUSR2 writes DIR/memory-N.txt (`bench/soak.py --allocators DIR`): what each allocator holds,
from its own accounting: pymalloc (arenas, live and free bytes), the cyclic collector (full
collections, frozen objects), glibc (`mallinfo2`), SQLite (the process's total, and each
connection's page cache, schema and prepared statements) and SQLAlchemy's LRU caches (size
and inserts: inserts that go on after the warm-up are misses). Cheap enough to take every
10 s; it allocates little, so it does not move what it measures.
"""

from __future__ import annotations

import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType
from typing import Any

FRAMES = 12


_CACHES: list[Any] = []
_INSERTS: dict[int, int] = {}
_CONNECTIONS: Any = None


def register_connections() -> None:
    """Keep each `sqlite3` connection the server opens (they take no weak reference; a closed
    one is skipped and dropped). Looking for them with `gc.get_objects` instead would allocate
    a list of every object, which moves glibc's mmap threshold and so the figures measured."""
    import sqlite3

    global _CONNECTIONS
    _CONNECTIONS = []
    original = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        connection = original(*args, **kwargs)
        _CONNECTIONS.append(connection)
        return connection

    sqlite3.connect = connect  # type: ignore[assignment]


def count_cache_inserts() -> None:
    """Count the entries put in each of SQLAlchemy's LRU caches (the engines' compiled-statement
    caches among them): inserts that go on after the warm-up are misses."""
    from sqlalchemy.util import LRUCache

    original_init, original_set = LRUCache.__init__, LRUCache.__setitem__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        _CACHES.append(self)
        _INSERTS[id(self)] = 0

    def setitem(self: Any, key: Any, value: Any) -> None:
        _INSERTS[id(self)] = _INSERTS.get(id(self), 0) + 1  # LRUCache has __slots__
        original_set(self, key, value)

    LRUCache.__init__ = init  # type: ignore[method-assign]
    LRUCache.__setitem__ = setitem  # type: ignore[method-assign]


def caches() -> str:
    lines = [
        f"lru {index} size {len(cache)} capacity {cache.capacity} inserts {_INSERTS[id(cache)]}"
        for index, cache in enumerate(_CACHES)
    ]
    return "\n".join(lines) + "\n" if lines else ""


def collector() -> str:
    """The cyclic collector: full collections so far, objects it found unreachable in them,
    objects frozen out of its reach (`gc.freeze`)."""
    import gc

    full = gc.get_stats()[2]
    return (
        f"gc_full {full['collections']}\ngc_full_collected {full['collected']}\n"
        f"gc_frozen {gc.get_freeze_count()}\n"
    )


def malloc_memory() -> str:
    """glibc's figures (`mallinfo2`): bytes its heaps hold (main and thread arenas), in large
    blocks mapped on their own, in use, and free inside the heaps."""
    import ctypes

    class MallInfo2(ctypes.Structure):
        _fields_ = [
            (name, ctypes.c_size_t)
            for name in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                "uordblks", "fordblks", "keepcost",
            )
        ]  # fmt: skip

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return (
        f"malloc_heaps {info.arena}\nmalloc_mapped {info.hblkhd}\n"
        f"malloc_used {info.uordblks}\nmalloc_free {info.fordblks}\n"
        f"malloc_fastbins {info.fsmblks}\nmalloc_top {info.keepcost}\n"
    )


def malloc_info(path: Path) -> None:
    """glibc's `malloc_info` XML (per arena: free chunks by size, what is mapped) to `path`."""
    import ctypes

    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    stream = libc.fopen(str(path).encode(), b"w")
    if stream:
        libc.malloc_info(0, stream)
        libc.fclose(stream)


def trimmer() -> str:
    """`malloc_trim` calls made by the server (`ATRIUM_MALLOC_TRIM_SECONDS`) and their CPU."""
    from atrium.process_tuning import malloc_trim

    active = malloc_trim.active
    if active is None:
        return ""
    return f"trim_calls {active.calls}\ntrim_cpu_us {int(active.cpu_seconds * 1e6)}\n"


def python_memory() -> str:
    """pymalloc's own figures (`sys._debugmallocstats`, which writes to fd 2): arenas held,
    bytes in live blocks, bytes free in partly used pools and arenas."""
    import os
    import re
    import tempfile

    with tempfile.TemporaryFile("w+") as out:
        saved = os.dup(2)
        try:
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read()
    wanted = {
        "arenas allocated current": "py_arenas",
        "bytes in allocated blocks": "py_live",
        "bytes in available blocks": "py_free_blocks",
        "unused pools": "py_unused_pools",
        "bytes lost to pool headers": "py_pool_headers",
        "bytes lost to quantization": "py_quantization",
        "bytes lost to arena alignment": "py_alignment",
    }
    lines = []
    for line in text.splitlines():
        for label, name in wanted.items():
            if label in line:
                number = re.findall(r"[\d,]+", line.split("=")[-1])[-1].replace(",", "")
                lines.append(f"{name} {number}")
    return "\n".join(lines) + "\n"


# sqlite3_db_status operations (sqlite3.h)
_DBSTATUS = {"cache": 1, "schema": 2, "statements": 3}


def sqlite_memory() -> str:
    """SQLite's own memory accounting: the process total, then each open `sqlite3` connection's
    page cache, schema and prepared statements (`sqlite3_db_status`), in bytes."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    current, highest = ctypes.c_int(), ctypes.c_int()
    lines = [f"memory_used {lib.sqlite3_memory_used()}"]
    for obj in list(_CONNECTIONS or ()):
        # pysqlite's Connection struct: the object header, then `sqlite3 *db` (CPython 3.11).
        db = ctypes.c_void_p.from_address(id(obj) + object.__basicsize__).value
        if not db:
            _CONNECTIONS.remove(obj)
            continue
        figures = []
        for name, op in _DBSTATUS.items():
            lib.sqlite3_db_status(
                ctypes.c_void_p(db), op, ctypes.byref(current), ctypes.byref(highest), 0
            )
            figures.append(f"{name} {current.value}")
        lines.append(f"connection {db:#x} " + " ".join(figures))
    return "\n".join(lines) + "\n"


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    taken = 0

    def snapshot(_signum: int, _frame: FrameType | None) -> None:
        nonlocal taken
        if tracemalloc.is_tracing():
            taken += 1
            tracemalloc.take_snapshot().dump(str(folder / f"snapshot-{taken}.pickle"))
        else:
            tracemalloc.start(FRAMES)
        (folder / f"snapshot-{taken}.done").touch()

    signal.signal(signal.SIGUSR1, snapshot)
    reported = 0

    def memory_report(_signum: int, _frame: FrameType | None) -> None:
        nonlocal reported
        reported += 1
        malloc_info(folder / f"malloc-info-{reported}.xml")
        (folder / f"memory-{reported}.txt").write_text(
            python_memory() + collector() + malloc_memory() + trimmer() + sqlite_memory() + caches()
        )

    signal.signal(signal.SIGUSR2, memory_report)
    count_cache_inserts()
    register_connections()
    sys.argv = ["atrium", *sys.argv[2:]]
    from atrium.cli import app

    app()


if __name__ == "__main__":
    main()
