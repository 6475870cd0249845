"""Helpers of the tests that run real servers in subprocesses: the `atrium` command, a free
loopback port, waiting until a server answers, and stopping a process.

Waits fail fast: when the process being waited on has exited, the failure says so at once with
the tail of its log, instead of polling a dead port until the timeout.
"""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

# How long a server may take to start answering. A start-up is mostly imports: about 2 s of
# CPU on a quiet machine, but 15-25 s were measured on a slow, shared CI machine. Waits end as
# soon as the server answers, and at once when it exits, so a generous bound costs nothing.
START_TIMEOUT = 120.0

ATRIUM = str(Path(sys.executable).with_name("atrium"))
# Shared with the benchmarks (bench/streaming_bench.py drives it at scale).
SLOW_LLM = Path(__file__).parents[1] / "bench" / "slow_llm.py"
LOG_TAIL_CHARS = 8000


def free_port() -> int:
    """A loopback port nothing listens on now (the OS picks it; a race with others is unlikely)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def atrium_env(**variables: str) -> dict[str, str]:
    """This process's environment without its `ATRIUM_*` settings, plus `variables`: a server
    under test sees only what the test gives it, never the developer's own configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(variables)
    return env


def log_tail(log: Path | None) -> str:
    """The end of a process's log, for a failure message ("" when there is no log)."""
    if log is None or not log.exists():
        return ""
    return log.read_text(errors="replace")[-LOG_TAIL_CHARS:]


def _wait(
    answers: Callable[[], bool],
    what: str,
    *,
    timeout: float,
    pause: float,
    process: subprocess.Popen[Any] | None,
    log: Path | None,
) -> None:
    """Poll `answers` every `pause` seconds until it holds; fail when `process` has exited."""
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and (code := process.poll()) is not None:
            args = process.args
            command = shlex.join(map(str, args)) if isinstance(args, list | tuple) else str(args)
            raise AssertionError(f"{command} exited ({code}) before {what}:\n{log_tail(log)}")
        if answers():
            return
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s before {what}:\n{log_tail(log)}")
        time.sleep(pause)


def wait_for_port(
    port: int,
    *,
    timeout: float = START_TIMEOUT,
    process: subprocess.Popen[Any] | None = None,
    log: Path | None = None,
) -> None:
    """Return once something accepts TCP connections on loopback `port`.

    Fails when `process` (the one meant to listen) exits first, or after `timeout` seconds.
    """

    def accepts() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        except OSError:
            return False
        return True

    what = f"port {port} opened"
    _wait(accepts, what, timeout=timeout, pause=0.05, process=process, log=log)


def wait_for_http(
    url: str,
    *,
    timeout: float = START_TIMEOUT,
    process: subprocess.Popen[Any] | None = None,
    log: Path | None = None,
) -> None:
    """Return once `url` (a `/healthz`) answers 200.

    Fails when `process` (the server) exits first, or after `timeout` seconds. An async test
    calls it through `asyncio.to_thread`, so its own event loop keeps serving meanwhile.
    """

    def answers() -> bool:
        try:
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    what = f"{url} answered 200"
    _wait(answers, what, timeout=timeout, pause=0.1, process=process, log=log)


def stop_process(process: subprocess.Popen[Any], *, timeout: float = 15.0) -> None:
    """Terminate `process` and wait for it; kill it if it has not exited within `timeout`."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def listening(command: list[str], port: int, log: Path, **options: Any) -> Iterator[None]:
    """`command` running (its output in `log`) until the block ends, entered once it listens
    on loopback `port`."""
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, **options)
        try:
            wait_for_port(port, process=process, log=log)
            yield
        finally:
            stop_process(process)


@contextmanager
def slow_llm(*, pause: float, words: int) -> Iterator[str]:
    """The slow OpenAI-compatible model of `bench/slow_llm.py` on a free port, streaming
    `words` words `pause` seconds apart; yields its base URL once it listens."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(SLOW_LLM), str(port), str(pause), str(words)])
    try:
        wait_for_port(port, process=process)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop_process(process, timeout=10)


def new_account_key(env: dict[str, str], *, tier: str = "standard") -> str:
    """A key of a new, empty account on the database of a server started with `env`.

    Made in this process through the same function as `atrium keys create` (whose command has
    its own tests in tests/test_cli.py): a CLI process per key cost ~2 s of start-up per test.
    It runs in a thread of its own because the caller may be inside an event loop.
    """
    from atrium import operations
    from atrium.settings import Settings

    settings = Settings(_env_file=None, database_url=env["ATRIUM_DATABASE_URL"])
    account = f"test-{time.monotonic_ns()}"
    with ThreadPoolExecutor(max_workers=1) as thread:
        made = thread.submit(operations.create_key, settings, account=account, tier=tier)
        return made.result(timeout=60).key
