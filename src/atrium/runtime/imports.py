"""Libraries a run imports the first time it needs them, off the event loop
(docs/decisions/0015-imports-on-first-use.md).

A process imports a provider's SDK when it builds its first model of that provider, and the MCP
libraries for its first run with an MCP server, not at start. Such an import is 1 to 2.6 s of CPU
on the development machine (`anthropic` the most); made in the event loop it would stop every
other run of the process for as long: their streams, and the heartbeats that renew their
leases (a lease a test shortens to 1.5 s would run out). A thread lets the loop go on between
the import's steps: at load 12, importing `anthropic` stopped the loop for 10.4 s, and in a
thread for at most 1.0 s at a time.
"""

from __future__ import annotations

import asyncio
import importlib

# What was imported this way; a set lookup is all a later run pays.
_imported: set[tuple[str, ...]] = set()


async def import_off_loop(modules: tuple[str, ...]) -> None:
    """Import `modules` in a thread, unless done before in this process. Runs that ask at the
    same time each wait for a thread; Python's import lock makes the second one wait for the
    first import instead of doing it again."""
    if modules in _imported:
        return
    await asyncio.to_thread(_import, modules)
    _imported.add(modules)


def _import(modules: tuple[str, ...]) -> None:
    for module in modules:
        importlib.import_module(module)
