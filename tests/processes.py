"""Helpers of the tests that run real servers in subprocesses: the `atrium` command, a free
loopback port, waiting until a server answers, and stopping a process.

Waits fail fast: when the process being waited on has exited, the failure says so at once with
the tail of its log, instead of polling a dead port until the timeout.

`start_atrium` and `run_atrium` run `atrium ARGS` in a process of its own. By default that
process is forked from a multiprocessing "forkserver" that has already imported the server's
libraries (`set_forkserver_preload`): a fresh `atrium serve` spends ~1.5 s of its ~2.1 s of
start-up CPU importing FastAPI, pydantic, SQLAlchemy and pydantic-ai, and the suite starts
dozens. The forked process is still a process of its own running the console script's code
(`atrium.cli:app` with these ARGS, imported after its environment is set), with only the given
environment, its own stdout/stderr files, real sockets, real signals (SIGKILL kills it) and an
exit status like a subprocess's (-9 after SIGKILL). Measured on a 2-core machine (calibration
~12 ms), CPU of the whole process tree: the restart/SIGKILL modules (tests/worker,
tests/reliability, tests/webhooks/test_restart, the client's restart and CLI modules) 78 -> 32 s;
scale-out, crash safety and the client's CLI 97 -> 60 s.

What differs from the installed script: the interpreter is not started again, the preloaded modules
were imported under the forkserver's environment (none of them reads atrium's settings at import;
the OpenAI SDK reads `OPENAI_LOG`, which no test sets), and the process ends with `os._exit` after
its threads, so `atexit` handlers do not run (atrium registers none). Its CPU is reaped by the
forkserver, so the test process's `RUSAGE_CHILDREN` sees it only once the forkserver exits; count
the forkserver's children to measure a test. `ATRIUM_TEST_SPAWN=exec` runs the installed `atrium`
script instead (`subprocess.Popen`); the tests about the command itself (tests/test_cli.py's
`serve` tests, test_startup_imports, test_readme_mcp, the client's `--help` and terminal tests)
always do.
"""

from __future__ import annotations

import multiprocessing
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any, Protocol

import httpx

from atrium.agents.model_check import OPENAI_COMPATIBLE
from atrium.runtime.llm_models import PROVIDER_MODULES
from tests.cli_main import ATRIUM, run_cli

# How long a server may take to start answering. A start-up is mostly imports: about 2 s of
# CPU on a quiet machine, but 15-25 s were measured on a slow, shared CI machine. Waits end as
# soon as the server answers, and at once when it exits, so a generous bound costs nothing.
START_TIMEOUT = 120.0

# Shared with the benchmarks (bench/streaming_bench.py drives it at scale).
SLOW_LLM = Path(__file__).parents[1] / "bench" / "slow_llm.py"
LOG_TAIL_CHARS = 8000
# "fork" (the default): `atrium` processes are forked from a forkserver that imported the
# server's libraries once; "exec": the installed script, a new interpreter per process.
SPAWN = os.environ.get("ATRIUM_TEST_SPAWN", "fork")
# The libraries an `atrium serve` or `atrium worker` imports before it answers (most of its
# start-up). Not `atrium.cli`: the command and its consoles are imported by each process, after
# its environment is set, as a fresh process would (they read COLUMNS and the like at import).
PRELOAD = [
    # The main module (pytest's script): imported once here, instead of in every forked process.
    "__main__",
    "atrium.operations",
    "atrium.app",
    "atrium.worker.process",
    "atrium.http.protocol",
    "typer",
    "rich.console",
    "httpx",
    # What a process imports off the event loop for its first run of an "openai-compatible"
    # model (atrium.runtime.llm_models), as the scale-out, restart and client servers do: 0.59-0.69
    # s of CPU each time (calibration 14-24 ms). Processes of those modules, whole tree, -n 2,
    # alternated: 83.8 / 89.9 -> 80.8 / 79.5 s.
    *PROVIDER_MODULES[OPENAI_COMPATIBLE],
    # What a server imports on its first connection or request (asyncpg on PostgreSQL): 30-44 ms.
    "anyio._backends._asyncio",
    "asyncpg",
    "uvicorn.loops.auto",
    "uvicorn.protocols.websockets.auto",
    # What a client command (`atrium run`, `atrium runs …`) imports besides `atrium.cli`: the
    # client and its pydantic models, 32-36 ms of CPU a forked command (calibration ~13 ms).
    "atrium.client",
    # Last: freezes the heap the modules above built (tests/frozen_preload.py).
    "tests.frozen_preload",
]


class Process(Protocol):
    """What the tests use of a started process: a `subprocess.Popen` or a `Forked`."""

    @property
    def args(self) -> Any: ...

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | Any: ...

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


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
    process: Process | None,
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
    process: Process | None = None,
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
    process: Process | None = None,
    log: Path | None = None,
) -> None:
    """Return once `url` (a `/healthz`) answers 200.

    Fails when `process` (the server) exits first, or after `timeout` seconds. An async test
    calls it through `asyncio.to_thread`, so its own event loop keeps serving meanwhile.
    """

    # One client for every poll: `httpx.get` builds a client (and its TLS context) per call,
    # ~26 ms of CPU, which over a start-up of 10-20 s on a busy machine was seconds per server.
    with httpx.Client(timeout=1) as client:

        def answers() -> bool:
            try:
                return client.get(url).status_code == 200
            except httpx.TransportError:
                return False

        what = f"{url} answered 200"
        _wait(answers, what, timeout=timeout, pause=0.1, process=process, log=log)


def stop_process(process: Process, *, timeout: float = 15.0) -> None:
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
def slow_llm(*, pause: float, words: int, log: Path | None = None) -> Iterator[str]:
    """The slow OpenAI-compatible model of `bench/slow_llm.py` on a free port, streaming
    `words` words `pause` seconds apart (or following a prompt's script of tool calls);
    yields its base URL once it listens. `log`: where it writes each request's body."""
    port = free_port()
    command = [sys.executable, str(SLOW_LLM), str(port), str(pause), str(words)]
    process = subprocess.Popen([*command, "--log", str(log)] if log else command)
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


def _atrium_main(
    args: list[str], env: dict[str, str], cwd: str | None, files: tuple[str, str, str]
) -> None:
    """The forked process: `env` only, `files` as its stdin, stdout and stderr, then the
    console script's `atrium.cli:app` with `args` (its exit status becomes the process's)."""
    os.environ.clear()
    os.environ.update(env)
    if cwd is not None:
        os.chdir(cwd)
    for fd, path in enumerate(files):
        flags = os.O_RDONLY if fd == 0 else os.O_WRONLY | os.O_APPEND | os.O_CREAT
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    run_cli(args, env)


class Forked:
    """`atrium ARGS` forked from the forkserver, with the `subprocess.Popen` methods the
    tests use; `returncode` is negative for a signal (-9 after SIGKILL), as Popen's is."""

    def __init__(self, args: list[str], process: BaseProcess) -> None:
        self.args = args
        self._process = process
        self.pid: int = process.pid  # type: ignore[assignment]

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


_forkserver = multiprocessing.get_context("forkserver")
_forkserver.set_forkserver_preload(PRELOAD)


def start_atrium(
    args: Sequence[str],
    *,
    env: dict[str, str],
    output: Path,
    stderr: Path | None = None,
    stdin: Path | None = None,
    cwd: Path | None = None,
) -> Process:
    """`atrium ARGS` with only `env`, its stdout appended to `output` (its stderr too, unless
    `stderr` names another file); forked or executed as `SPAWN` says (module docstring)."""
    command = [ATRIUM, *args]
    if SPAWN == "exec":
        given, errors = stdin or Path(os.devnull), stderr or output
        with given.open("rb") as inp, output.open("ab") as out, errors.open("ab") as err:
            return subprocess.Popen(command, env=env, cwd=cwd, stdin=inp, stdout=out, stderr=err)
    files = (str(stdin or os.devnull), str(output), str(stderr or output))
    where = None if cwd is None else str(cwd)
    process = _forkserver.Process(target=_atrium_main, args=(list(args), env, where, files))
    process.start()
    return Forked(command, process)


def run_atrium(
    args: Sequence[str],
    *,
    env: dict[str, str],
    input: str | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """`atrium ARGS` to its end, as `subprocess.run(..., capture_output=True, text=True)`."""
    with tempfile.TemporaryDirectory(prefix="atrium-run-") as tmp:
        out, err, given = Path(tmp, "stdout"), Path(tmp, "stderr"), Path(tmp, "stdin")
        given.write_text(input or "")  # empty as /dev/null when there is no input
        process = start_atrium(args, env=env, output=out, stderr=err, stdin=given, cwd=cwd)
        try:
            code = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        return subprocess.CompletedProcess(process.args, code, out.read_text(), err.read_text())
