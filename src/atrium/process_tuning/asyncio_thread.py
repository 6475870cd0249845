"""sniffio told up front that the thread runs asyncio
(docs/decisions/0014-uvloop-and-sniffio-in-every-process.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import sniffio


@contextlib.contextmanager
def asyncio_thread() -> Iterator[None]:
    """Tell sniffio that this thread runs an asyncio event loop, while the block runs it.

    anyio asks sniffio which library runs for every cancel scope, lock, event and task group it
    makes (pydantic-ai's stream layers and httpx2's pool make ~230 a streamed run), and sniffio
    finds asyncio by calling `asyncio.current_task()`, a Python function on 3.11. Its
    thread-local name is the answer it gives first, for a thread that runs one loop and nothing
    else, as the server's main thread does while uvicorn or the worker runs
    (0.45 µs less per lookup, measured). Cleared after: `anyio.run` refuses to start in a thread
    sniffio says is running a loop already.
    """
    previous = sniffio.thread_local.name
    sniffio.thread_local.name = "asyncio"
    try:
        yield
    finally:
        sniffio.thread_local.name = previous
