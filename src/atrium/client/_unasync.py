"""Generate the blocking client (`_sync.py`) from the asyncio one (`_async.py`).

httpcore's unasync habit: the asyncio client is the only source. A word-level rewrite (`async def`
to `def`, `await x` to `x`, `AsyncClient` to `Client`, `aread` to `read`, ...) turns it into the
blocking client; ruff then sorts the imports, drops the ones the rewrite left unused and formats.
What no rewrite expresses lives in `_hooks.py`, written twice.

    python -m atrium.client._unasync           # (re)write _sync.py
    python -m atrium.client._unasync --check   # exit 1 when _sync.py is stale

`make format` runs the first, `make lint` (so CI) the second, and tests/client checks it too.
A rule that no longer matches anything fails the run, so the list cannot silently rot.
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).with_name("_async.py")
TARGET = Path(__file__).with_name("_sync.py")

HEADER = (
    "# Code generated from _async.py by `python -m atrium.client._unasync`. DO NOT EDIT.\n"
    "# Change _async.py, then run `make format`; `make lint` and the tests fail on a stale copy.\n"
)

# (pattern, replacement), applied in this order to every line of _async.py.
RULES: tuple[tuple[str, str], ...] = (
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
    (r"\ba(close|read|iter_bytes|iter_sse|connect_sse|call_hook|call_user)\b", r"\1"),
    # An asyncio `on_event` hook may return an awaitable; a blocking one returns nothing.
    (r"\bAwaitable\[None\] \| None\b", "None"),
    # Waivers of asyncio-only lint rules (ASYNC109: a `timeout` parameter of an async function).
    (r" *# noqa: ASYNC\d+.*", ""),
)

# After the rewrite: sort imports (I), drop the ones only the asyncio code used (F401: asyncio,
# Awaitable), and turn `for x in it: yield x`, which async generators must spell out, into
# `yield from it` (UP028; an "unsafe" fix only because `yield from` also forwards send() and
# close() to the inner generator, which is what the event stream wants: closing `runs.stream()`
# closes its connection at once).
RUFF_FIXES = "I,F401,UP028"


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


def _ruff(*args: str, text: str) -> str:
    # --stdin-filename gives ruff the project's settings and tells it the module is first-party.
    command = [sys.executable, "-m", "ruff", *args, "--stdin-filename", str(TARGET), "-"]
    return subprocess.run(command, input=text, capture_output=True, text=True, check=True).stdout


def generate(source: str) -> str:
    """The complete `_sync.py` that `source` (the text of `_async.py`) makes."""
    fixed = _ruff(
        "check",
        "--quiet",
        "--exit-zero",
        "--fix",
        "--unsafe-fixes",
        "--select",
        RUFF_FIXES,
        text=HEADER + rewrite(source),
    )
    return _ruff("format", "--quiet", text=fixed)


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
        print(f"\n{target} is stale: run `make format` (python -m atrium.client._unasync)")
        return 1
    target.write_text(expected)
    print(f"wrote {target} from {SOURCE.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
