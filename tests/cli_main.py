"""`atrium ARGS` run in this process, as the console script runs it: for a process forked from
one that has imported the libraries already (tests/processes.py's forkserver, the docs pages'
commands in tests/docs/forked_cli.py). Standard library only, so that importing it costs the
forking process nothing."""

from __future__ import annotations

import io
import sys
from pathlib import Path

ATRIUM = str(Path(sys.executable).with_name("atrium"))


def _stream(fd: int, *, unbuffered: bool, line_buffering: bool) -> io.TextIOWrapper:
    """A text stream on `fd` buffered as CPython buffers its standard streams."""
    raw = io.FileIO(fd, "w", closefd=False)
    binary: io.RawIOBase | io.BufferedWriter = raw if unbuffered else io.BufferedWriter(raw)
    return io.TextIOWrapper(
        binary,  # type: ignore[arg-type]
        encoding="utf-8",
        errors="backslashreplace" if fd == 2 else "strict",
        line_buffering=line_buffering,
        write_through=unbuffered,
    )


def run_cli(args: list[str], env: dict[str, str]) -> None:
    """`atrium ARGS` in this process, whose file descriptors 0-2 and environment are the
    command's: the standard streams made anew on them, then the console script's app (it
    ends with `SystemExit`, the command's exit status)."""
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = sys.__stdout__ = _stream(1, unbuffered=unbuffered, line_buffering=False)
    sys.stderr = sys.__stderr__ = _stream(2, unbuffered=unbuffered, line_buffering=True)
    sys.argv = [ATRIUM, *args]
    from atrium.cli import app

    app(prog_name="atrium")
