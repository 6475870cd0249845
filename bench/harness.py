"""What the benchmarks share: a real `atrium serve` in a subprocess, its CPU and memory from its
own counters, the CPU calibration every figure is printed beside, and SSE parsing.

Scripts import it from their own folder (`from harness import …`: a script's directory is on
its path).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psutil

HERE = Path(__file__).parent
ATRIUM = str(Path(sys.executable).with_name("atrium"))
RUNS = "/api/v1/public/agent/runs"
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}
_KEY = re.compile(r"atr_[A-Za-z0-9_-]{20,}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def stamp(value: str) -> float:
    """Unix seconds of one of the API's timestamps (`2026-01-01T10:00:00.000000Z`)."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


def calibration_ms() -> float:
    """CPU time of a fixed piece of pure Python (best of 5): figures of slower or faster
    machines, or of one machine on different days, compare once divided by it."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        sum(range(10**6))
        best = min(best, time.process_time() - started)
    return best * 1000


async def sse_frames(response: httpx.Response) -> AsyncIterator[tuple[float, dict[str, Any]]]:
    """(arrival time, frame) of each SSE event of a response; comments are skipped."""
    buffer = ""
    async for chunk in response.aiter_text():
        buffer += chunk.replace("\r\n", "\n")
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            frame: dict[str, Any] = {}
            for line in block.split("\n"):
                if line and not line.startswith(":"):
                    name, _, value = line.partition(":")
                    frame[name] = value.strip()
            if "data" in frame:
                frame["data"] = json.loads(frame["data"])
                yield time.time(), frame


class Meter:
    """CPU seconds (user + system, the process and its children) and peak RSS of a server,
    from the kernel's own counters."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)

    def cpu_seconds(self) -> float:
        total = 0.0
        for process in [self.process, *self.process.children(recursive=True)]:
            with contextlib.suppress(psutil.NoSuchProcess):
                times = process.cpu_times()
                total += times.user + times.system
        return total

    def peak_rss_mb(self) -> float:
        """The kernel's high-water mark of resident memory (VmHWM) of the server process."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return self.process.memory_info().rss / 2**20

    def rss_mb(self) -> float:
        return float(self.process.memory_info().rss) / 2**20


def named_pids(name: str) -> list[int]:
    """The top processes named `name` (a postmaster and its backends: the postmaster)."""
    found = [p for p in psutil.process_iter(["name", "ppid"]) if p.info["name"] == name]
    pids = {p.pid for p in found}
    return [p.pid for p in found if p.info["ppid"] not in pids]


def atrium_env(**variables: str) -> dict[str, str]:
    """This environment without its `ATRIUM_*` settings, plus `variables`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(variables)
    return env


@dataclass(frozen=True, slots=True)
class Server:
    url: str
    key: str
    pid: int
    workdir: Path


def sqlite_env(
    prefix: str, settings: dict[str, str] | None = None
) -> tuple[Path, int, dict[str, str]]:
    """A fresh temp dir (named `prefix`…), a free loopback port and the environment of an
    `atrium` process on a new SQLite file there, `settings` (names without `ATRIUM_`) changed
    from the defaults."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    port = free_port()
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{workdir / 'atrium.db'}",
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        **{f"ATRIUM_{name.upper()}": value for name, value in (settings or {}).items()},
    )
    return workdir, port, env


def migrate_and_key(env: dict[str, str], *, tier: str = "premium") -> str:
    """`atrium migrate` on `env`'s database, then a key of account `bench` in `tier`."""
    subprocess.run([ATRIUM, "migrate"], env=env, check=True, capture_output=True)
    made = subprocess.run(
        [ATRIUM, "keys", "create", "--account", "bench", "--tier", tier],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    key: str = _KEY.findall(made.stdout)[-1]
    return key


@contextlib.contextmanager
def atrium_serve(
    *, settings: dict[str, str] | None = None, tier: str = "premium"
) -> Iterator[Server]:
    """`atrium serve` on a free loopback port with a fresh SQLite file in a temp dir and only
    `settings` (names without the `ATRIUM_` prefix) changed from the defaults.

    The key is made with `atrium keys create --tier TIER` before the server starts: a client
    that follows its own runs makes two requests per run, and the standard tier's 1000/hour
    would refuse half of a 1,000-run burst.
    """
    workdir, port, env = sqlite_env("atrium-bench-", settings)
    key = migrate_and_key(env, tier=tier)
    log = (workdir / "server.log").open("w")
    process = subprocess.Popen(
        [ATRIUM, "serve", "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(process, url, workdir / "server.log")
        yield Server(url=url, key=key, pid=process.pid, workdir=workdir)
    finally:
        stop(process)
        log.close()


def wait_until_healthy(
    process: subprocess.Popen[bytes], url: str, log: Path, *, pause: float = 0.1
) -> None:
    """Return once `url`'s /healthz answers 200; exit the bench if the server dies or takes
    over two minutes (`log` is where its output went)."""
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"server did not start; see {log}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(pause)


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it is still running 30 s later."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()


@contextlib.contextmanager
def _loopback_server(script: str, *args: str) -> Iterator[int]:
    """This folder's `script` serving on a free loopback port (its first argument), in a
    process of its own (its CPU is not the measured process's); yields the port once it
    accepts connections."""
    port = free_port()
    process = subprocess.Popen([sys.executable, str(HERE / script), str(port), *args])
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{script} did not start")
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


@contextlib.contextmanager
def slow_llm(*, latency: float, chunks: int) -> Iterator[str]:
    """The OpenAI-compatible streaming server of `slow_llm.py`, answering in `chunks` pieces
    over `latency` seconds; yields its base URL."""
    pause = latency / chunks if chunks else 0.0
    with _loopback_server("slow_llm.py", str(pause), str(chunks)) as port:
        yield f"http://127.0.0.1:{port}/v1"


@contextlib.contextmanager
def mcp_echo() -> Iterator[str]:
    """The MCP server of `mcp_echo.py` (one tool, `echo`); yields its URL."""
    with _loopback_server("mcp_echo.py") as port:
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def py_spy(pid: int, output: Path | None, *, rate: int = 100) -> Iterator[None]:
    """Sample `pid` with py-spy (collapsed stacks into `output`) while the block runs."""
    if output is None:
        yield
        return
    spy = str(Path(sys.executable).with_name("py-spy"))
    command = [spy, "record", "--pid", str(pid), "--format", "raw", "--rate", str(rate)]
    process = subprocess.Popen(
        [*command, "--output", str(output), "--nonblocking"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)  # attached
        yield
    finally:
        process.send_signal(2)  # SIGINT: py-spy writes its output and exits
        process.wait(timeout=60)


# Where a sampled frame's time goes: the first rule whose text is in its file path names the
# part. py-spy prints paths from the package folder on: `(sqlalchemy/engine/base.py:1)`.
_PARTS = [
    ("(pydantic_ai/", "pydantic-ai"),
    ("(openai/", "openai SDK"),
    ("(httpx/", "httpx/httpcore"),
    ("(httpcore/", "httpx/httpcore"),
    ("(sqlalchemy/", "SQLAlchemy"),
    ("(aiosqlite/", "aiosqlite + sqlite3 (writer/reader threads)"),
    ("(sqlite3/", "aiosqlite + sqlite3 (writer/reader threads)"),
    ("(sse_starlette/", "SSE (sse-starlette)"),
    ("(starlette/", "starlette/FastAPI"),
    ("(fastapi/", "starlette/FastAPI"),
    ("(anyio/", "anyio"),
    ("(uvicorn/", "uvicorn"),
    ("(pydantic/", "pydantic"),
    ("(pydantic_core/", "pydantic"),
    ("(limits/", "limits"),
    ("(json/", "json"),
    ("(logging/", "logging"),
    ("(atrium/http/", "atrium http/"),
    ("(atrium/worker/", "atrium worker/"),
    ("(atrium/runs/", "atrium runs/"),
    ("(atrium/runtime/", "atrium runtime/"),
    ("(atrium/", "atrium (other)"),
    ("(asyncio/runners.py", "event loop (uvloop, C)"),
    ("(asyncio/", "asyncio"),
]


# What the server was doing in a sample: the first rule whose text is anywhere in its stack.
_ACTIVITIES = [
    ("create_run (atrium/runs/api/endpoints", "POST a run (endpoint)"),
    ("run_events (atrium/runs/api/endpoints", "GET events (endpoint)"),
    ("(sse_starlette/", "SSE streaming (sse-starlette, RunEventStream)"),
    ("RunEventStream", "SSE streaming (sse-starlette, RunEventStream)"),
    # A stream is sent by its request's task, inside the middleware: named before them.
    ("EventStreamResponse", "SSE streaming (sse-starlette, RunEventStream)"),
    ("(openai/", "model stream: openai SDK"),
    ("(atrium/runtime/openai_client", "model stream: atrium's OpenAI-compatible client"),
    ("(aiohttp/", "model stream: aiohttp"),
    ("(httpcore2/", "model stream: httpx2/httpcore2"),
    ("RunRecorder", "run events: recorder"),
    ("WriteBatcher", "batched writes"),
    ("(concurrent/futures/thread", "batched writes (SQLite writer thread)"),
    ("_connection_worker_thread", "aiosqlite threads (async sessions)"),
    ("RunExecution", "run execution: pydantic-ai agent loop + runtime"),
    ("(pydantic_ai/", "run execution: pydantic-ai agent loop + runtime"),
    ("WorkerPool", "worker pool: claim, heartbeat, recovery"),
    ("GatewayMiddleware", "HTTP: gateway (auth, rate limit)"),
    ("RequestContextMiddleware", "HTTP: the rest of the app"),
    # Not "(uvicorn/": every sample of the main thread has `uvicorn.run` at its root, so that
    # rule named everything unmatched above "uvicorn".
    ("(uvicorn/protocols/", "HTTP: uvicorn"),
    # What is left with nothing of the above on its stack: the event loop polling (uvloop's
    # C code under `Runner.run`).
    ("Runner.run (asyncio/runners", "event loop (polling, callbacks)"),
]


def _activity(stack: str) -> str:
    return next((name for needle, name in _ACTIVITIES if needle in stack), "other")


def _part(frame: str) -> str:
    for needle, name in _PARTS:
        if needle in frame:
            return name
    return "other"


def profile_summary(path: Path, *, top: int = 15) -> str:
    """Shares of a py-spy raw profile: by activity (creates, streams, run execution, …), by
    part (the innermost known library of each sample, i.e. where the CPU was spent) and the
    top functions by own time."""
    by_part: Counter[str] = Counter()
    by_frame: Counter[str] = Counter()
    by_activity: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [frame for frame in stack.split(";") if frame]
        if not frames:
            continue
        total += count
        by_activity[_activity(stack)] += count
        leaf = frames[-1]
        by_frame[leaf] += count
        # The innermost frame that is not asyncio/stdlib plumbing names the part.
        owner = next(
            (_part(f) for f in reversed(frames) if _part(f) not in {"other", "asyncio"}),
            _part(leaf),
        )
        by_part[owner] += count
    if not total:
        return "no samples"
    lines = [f"{total} samples; by activity (what the server was doing):"]
    lines += [f"  {share / total:6.1%}  {name}" for name, share in by_activity.most_common()]
    lines.append("by part (innermost library of each sample):")
    lines += [f"  {share / total:6.1%}  {name}" for name, share in by_part.most_common()]
    lines.append(f"top {top} functions by own time:")
    lines += [f"  {share / total:6.1%}  {name}" for name, share in by_frame.most_common(top)]
    return "\n".join(lines)


async def bench_agent(
    http: httpx.AsyncClient, model: str, *, tools: list[str] | None = None
) -> str:
    """A new agent `bench` on `model`; its id. `tools`: its tools (None: the default ones)."""
    config: dict[str, Any] = {"model": model}
    if tools is not None:
        config["tools"] = tools
    response = await http.post("/v1/agents", json={"name": "bench", "config": config})
    response.raise_for_status()
    agent_id: str = response.json()["agent_id"]
    return agent_id


def new_idempotency_key() -> dict[str, str]:
    return {"Idempotency-Key": secrets.token_hex(8)}


async def postgres_admin(server: str, sql: str) -> None:
    """Run `sql` (CREATE/DROP DATABASE) on the `postgres` database of a server URL given
    without a database name (`postgresql+asyncpg://user@host:5432`)."""
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(server.replace("postgresql+asyncpg", "postgresql") + "/postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@dataclass
class Cluster:
    """The scaled-out topology on loopback: API processes (`serve --no-worker`), worker
    processes (`atrium worker`), one fresh PostgreSQL database, one Redis prefix."""

    urls: list[str]
    key: str
    apis: list[subprocess.Popen[bytes]]
    workers: list[subprocess.Popen[bytes]]
    env: dict[str, str]
    workdir: Path

    def start_workers(self, count: int) -> None:
        for _ in range(count):
            with (self.workdir / f"worker-{len(self.workers)}.log").open("wb") as out:
                self.workers.append(
                    subprocess.Popen(
                        [ATRIUM, "worker"], env=self.env, stdout=out, stderr=subprocess.STDOUT
                    )
                )


@contextlib.contextmanager
def atrium_cluster(
    *, postgres: str, redis: str, apis: int, settings: dict[str, str] | None = None
) -> Iterator[Cluster]:
    """`apis` times `atrium serve --no-worker` on a new database `atrium_bench_<hex>` of the
    PostgreSQL server `postgres` (no database name in the URL; dropped at the end) and a new
    Redis prefix; workers are started with `Cluster.start_workers`. Settings as in
    `atrium_serve`; a premium key."""
    import asyncio

    name = f"atrium_bench_{secrets.token_hex(4)}"
    asyncio.run(postgres_admin(postgres, f'CREATE DATABASE "{name}"'))
    workdir = Path(tempfile.mkdtemp(prefix="atrium-cluster-"))
    ports = [free_port() for _ in range(apis)]
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"{postgres}/{name}",
        ATRIUM_REDIS_URL=redis,
        ATRIUM_REDIS_PREFIX=name,
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{ports[0]}",
        **{f"ATRIUM_{key.upper()}": value for key, value in (settings or {}).items()},
    )
    cluster = Cluster(
        urls=[f"http://127.0.0.1:{port}" for port in ports],
        key="",
        apis=[],
        workers=[],
        env=env,
        workdir=workdir,
    )
    try:
        cluster.key = migrate_and_key(env)
        for index, port in enumerate(ports):
            with (workdir / f"api-{index}.log").open("wb") as out:
                cluster.apis.append(
                    subprocess.Popen(
                        [ATRIUM, "serve", "--no-worker", "--port", str(port)],
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        deadline = time.monotonic() + 300  # start-up is imports: minutes on a loaded machine
        for url, process in zip(cluster.urls, cluster.apis, strict=True):
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"an API process did not start; see {workdir}")
                try:
                    if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
        yield cluster
    finally:
        for process in [*cluster.apis, *cluster.workers]:
            process.terminate()
        for process in [*cluster.apis, *cluster.workers]:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        asyncio.run(postgres_admin(postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
