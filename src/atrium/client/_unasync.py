"""Generate the blocking client (`_sync.py`) from the asyncio one (`_async.py`).

httpcore's unasync habit: the asyncio client is the only source. A word-level rewrite (`async def`
to `def`, `await x` to `x`, `AsyncClient` to `Client`, `aread` to `read`, ...) turns it into the
blocking client, and a loop that only re-yields (`for x in it: yield x`, which async generators
must spell out) becomes `yield from it`. What no rewrite expresses lives in `_hooks.py`, written
twice.

`_sync.py` is a build product, not a source file: the package build (`hatch_build.py`, so every
`pip install`, `make install` included) writes it, and git ignores it. One copy of the client is
kept by hand, and no second one sits in the tree to drift or to be read twice. Standard library
only, so the build can run it before anything is installed.

    python -m atrium.client._unasync           # (re)write _sync.py after editing _async.py
    python -m atrium.client._unasync --check   # exit 1 when _sync.py is stale

`make format` runs the first, `make lint` (so CI) the second, and tests/client checks it too.
A rule that no longer matches anything fails the run, so the list cannot silently rot.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("_async.py")
TARGET = Path(__file__).with_name("_sync.py")

HEADER = (
    "# Code generated from _async.py by `python -m atrium.client._unasync`. DO NOT EDIT.\n"
    "# A build product (git ignores it): edit _async.py; `make format` or an install rewrites it.\n"
)

# (pattern, replacement), applied in this order to every line of _async.py.
RULES: tuple[tuple[str, str], ...] = (
    # Imports only the asyncio code uses (`asyncio` for its sleep, `Awaitable` for hooks).
    (r"^import asyncio\n", ""),
    (r"\bAwaitable, ", ""),
    # The docstrings name the kind of client ("the asyncio client" becomes "the blocking client").
    (r"\basyncio client\b", "blocking client"),
    (r"\basyncio\.sleep\b", "time.sleep"),
    # AsyncClient, AsyncIterator, httpx.AsyncBaseTransport.
    (r"\bAsync([A-Z]\w*)", r"\1"),
    (r"\basync (def|with|for)\b", r"\1"),
    (r"\bawait ", ""),
    (r"\basynccontextmanager\b", "contextmanager"),
    (r"\b__a(enter|exit)__\b", r"__\1__"),
    # httpx's, httpx-sse's and _hooks' asyncio twins: aclose, aread, aiter_bytes, aiter_sse, ...
    (r"\ba(close|read|iter_bytes|iter_sse|connect_sse|call_hook|call_user|map_bounded)\b", r"\1"),
    # An asyncio `on_event` hook may return an awaitable; a blocking one returns nothing.
    (r"\bAwaitable\[None\] \| None\b", "None"),
    # Waivers of asyncio-only lint rules (ASYNC109: a `timeout` parameter of an async function).
    (r" *# noqa: ASYNC\d+.*", ""),
)


class StaleRules(Exception):
    """A rule matched nothing: _async.py changed under it, and the list needs updating."""


def rewrite(source: str) -> str:
    """The word-level async→sync rewrite of `source`, every rule required to apply."""
    used: set[str] = set()
    lines = []
    for line in source.splitlines(keepends=True):
        for pattern, replacement in RULES:
            line, count = re.subn(pattern, replacement, line)
            if count:
                used.add(pattern)
        lines.append(line)
    unused = [pattern for pattern, _ in RULES if pattern not in used]
    if unused:
        raise StaleRules(f"rules that matched nothing in {SOURCE.name}: {unused}")
    return "".join(lines)


def yield_from(source: str) -> str:
    """`for x in it: yield x` as `yield from it`: besides being shorter, `yield from` forwards
    close() to the inner generator, which is what the event stream wants (closing
    `runs.stream()` closes its connection at once). Found with `ast`, so a loop that does
    anything else is left alone."""
    lines = source.splitlines(keepends=True)
    loops = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and not node.orelse
        and len(node.body) == 1
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Yield)
        and isinstance(node.body[0].value.value, ast.Name)
        and node.body[0].value.value.id == node.target.id
    ]
    # From the last to the first, so the line numbers of the ones still to do hold.
    for loop in sorted(loops, key=lambda node: node.lineno, reverse=True):
        iterable = ast.get_source_segment(source, loop.iter)
        assert iterable is not None and loop.end_lineno is not None
        indent = lines[loop.lineno - 1][: loop.col_offset]
        lines[loop.lineno - 1 : loop.end_lineno] = [f"{indent}yield from {iterable}\n"]
    return "".join(lines)


def generate(source: str) -> str:
    """The complete `_sync.py` that `source` (the text of `_async.py`) makes."""
    return HEADER + yield_from(rewrite(source))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m atrium.client._unasync", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when stale")
    parser.add_argument("target", nargs="?", type=Path, default=TARGET, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    target: Path = args.target
    expected = generate(SOURCE.read_text())
    actual = target.read_text() if target.exists() else ""
    if actual == expected:
        print(f"{target} is up to date with {SOURCE.name}")
        return 0
    if args.check:
        diff = difflib.unified_diff(
            actual.splitlines(keepends=True),
            expected.splitlines(keepends=True),
            f"{target} (as it is)",
            f"{target} (generated from {SOURCE.name})",
        )
        sys.stdout.writelines(diff)
        print(f"\n{target} is stale: run `python -m atrium.client._unasync` (or `make format`)")
        return 1
    target.write_text(expected)
    print(f"wrote {target} from {SOURCE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
