"""The scaled-out topology as real processes: API processes (`atrium serve --no-worker`) and
`atrium worker` processes on loopback ports, sharing one PostgreSQL database and one Redis.

Runs only where both are configured (`ATRIUM_TEST_POSTGRES_URL`, `ATRIUM_TEST_REDIS_URL`), as
on CI. The processes are started with `tests.processes.start_atrium` (forked from a forkserver
that imported the server's libraries once; `ATRIUM_TEST_SPAWN=exec` runs the installed script).
"""

from __future__ import annotations

import asyncio
import re
import secrets
import signal
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests import processes
from tests.conftest import POSTGRES_URL, REDIS_URL, _create_postgres_database
from tests.processes import (
    Process,
    atrium_env,
    free_port,
    new_account_key,
    run_atrium,
    start_atrium,
    stop_process,
    wait_for_port,
)

pytestmark = [pytest.mark.postgres, pytest.mark.redis]
KEY = re.compile(r"atr_[A-Za-z0-9_-]{20,}")


@dataclass
class Proc:
    name: str
    process: Process
    log: Path
    url: str = ""

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as when a machine dies."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        stop_process(self.process, timeout=10)


@dataclass
class Topology:
    env: dict[str, str]
    tmp: Path
    procs: list[Proc] = field(default_factory=list)

    def _start(self, name: str, args: list[str], extra: dict[str, str]) -> Proc:
        log = self.tmp / f"{name}-{len(self.procs)}.log"
        log.write_text("")
        process = start_atrium(args, env={**self.env, **extra}, output=log)
        proc = Proc(name, process, log)
        self.procs.append(proc)
        return proc

    def api(self, **extra: str) -> Proc:
        """An `atrium serve --no-worker` process; returns once it answers."""
        port = free_port()
        proc = self._start(
            "api",
            ["serve", "--no-worker", "--port", str(port)],
            {"ATRIUM_PUBLIC_URL": f"http://127.0.0.1:{port}", **extra},
        )
        wait_for_port(port, process=proc.process, log=proc.log)
        proc.url = f"http://127.0.0.1:{port}"
        return proc

    def worker(self, **extra: str) -> Proc:
        proc = self._start("worker", ["worker"], extra)
        time.sleep(0.5)
        assert proc.process.poll() is None, proc.log.read_text()
        return proc

    def new_key(self, tier: str = "standard") -> str:
        return new_account_key(self.env, tier=tier)

    def stop_all(self) -> None:
        for proc in self.procs:
            proc.stop()


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[str]:
    """An OpenAI-compatible model that streams 30 words over about 3 seconds."""
    with processes.slow_llm(pause=0.1, words=30) as url:
        yield url


@pytest.fixture(scope="module")
async def shared_database() -> AsyncIterator[str]:
    if not (POSTGRES_URL and REDIS_URL):
        pytest.skip(
            "the scaled-out topology needs ATRIUM_TEST_POSTGRES_URL and ATRIUM_TEST_REDIS_URL"
        )
    url, drop = await _create_postgres_database(POSTGRES_URL)
    try:
        # Once per module, as an operator does before starting the processes (the tests share
        # the database; each has its own accounts and Redis prefix).
        env = atrium_env(ATRIUM_DATABASE_URL=url, PYTHONUNBUFFERED="1")
        migrated = await asyncio.to_thread(run_atrium, ["migrate"], env=env, timeout=120)
        assert migrated.returncode == 0, migrated.stderr
        yield url
    finally:
        await drop()


@pytest.fixture
def topology(shared_database: str, slow_llm: str, tmp_path: Path) -> Iterator[Topology]:
    env = atrium_env(
        ATRIUM_DATABASE_URL=shared_database,
        ATRIUM_REDIS_URL=str(REDIS_URL),
        ATRIUM_REDIS_PREFIX=f"atrium-scaleout-{secrets.token_hex(4)}",
        ATRIUM_LLM_BASE_URL=slow_llm,
        ATRIUM_SSE_HEARTBEAT_SECONDS="1",
        ATRIUM_SSE_MAX_STREAMS_PER_KEY="1000",
        # One PostgreSQL (100 connections) serves the whole suite beside these processes: at
        # the default pool each may open up to 32 (sessions 10 + 10 overflow, point reads 10,
        # the batcher 2), four of them 128, and a burst got "too many clients" on CI.
        ATRIUM_DB_POOL_SIZE="4",
        PYTHONUNBUFFERED="1",
    )
    topo = Topology(env=env, tmp=tmp_path)
    try:
        yield topo
    finally:
        topo.stop_all()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def read_events(
    http: httpx.AsyncClient,
    url: str,
    key: str,
    *,
    after: int | None = None,
    into: list[tuple[int, str]] | None = None,
) -> list[tuple[int, str]]:
    """`(id, event)` of every frame of a run's stream, to its end, appended to `into` as they
    arrive (so a caller keeps what came before a dropped connection)."""
    from httpx_sse import aconnect_sse

    headers = bearer(key)
    if after is not None:
        headers["Last-Event-ID"] = str(after)
    seen = [] if into is None else into
    async with aconnect_sse(http, "GET", url, headers=headers) as source:
        async for frame in source.aiter_sse():
            # httpx-sse turns a heartbeat comment into an empty "message" once an id was seen.
            if frame.id and frame.data:
                seen.append((int(frame.id), frame.event))
    return seen
