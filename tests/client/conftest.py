"""A real `atrium serve` process for the client's tests, and a slow model for live runs.

The server runs on a loopback port with a temporary SQLite database and a bootstrap key. Its
agents can use `openai-compatible:slow`, served by `bench/slow_llm.py`, whose answers take
seconds: long enough to follow a run live, cancel it, or drop its stream in the middle.

The server and the `atrium` commands of `Server.cli` are started with
`tests.processes.start_atrium`/`run_atrium`: forked from a forkserver that imported the
libraries once (`ATRIUM_TEST_SPAWN=exec` runs the installed script instead).
"""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from atrium.client import AsyncClient, Client
from tests import processes
from tests.processes import (
    atrium_env,
    free_port,
    new_account_key,
    run_atrium,
    start_atrium,
    stop_process,
    wait_for_http,
)

BOOTSTRAP_KEY = "atr_client-tests-bootstrap-key-0123456789"
SLOW_MODEL = "openai-compatible:slow"
SLOW_WORDS = 30
SLOW_PAUSE = 0.1


@dataclass
class Server:
    url: str
    port: int
    env: dict[str, str]
    log: Path

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run `atrium ARGS` as a user would, with ATRIUM_URL/ATRIUM_API_KEY set."""
        return run_atrium(args, env=self.env, timeout=timeout)

    def new_key(self, tier: str = "standard") -> str:
        """A key of a new account, so a test starts empty."""
        return new_account_key(self.env, tier=tier)


def _serve(tmp: Path, name: str, llm_url: str, **extra: str) -> Iterator[Server]:
    port = free_port()
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / f'{name}.db'}",
        ATRIUM_BOOTSTRAP_KEY=BOOTSTRAP_KEY,
        ATRIUM_PUBLIC_URL=f"http://127.0.0.1:{port}",
        ATRIUM_LLM_BASE_URL=llm_url,
        # Heartbeats between events, so every stream test also reads comment frames.
        ATRIUM_SSE_HEARTBEAT_SECONDS="0.25",
        # Webhook receivers of the tests (and of docs/guide/client.md) listen on loopback.
        ATRIUM_ALLOW_PRIVATE_TARGETS="true",
        ATRIUM_WEBHOOK_POLL_SECONDS="0.2",
        ATRIUM_WEBHOOK_BACKOFF_SECONDS="0.2",
        ATRIUM_URL=f"http://127.0.0.1:{port}",
        ATRIUM_API_KEY=BOOTSTRAP_KEY,
        PYTHONUNBUFFERED="1",
        **extra,
    )
    log = tmp / f"{name}.log"
    log.write_text("")
    process = start_atrium(["serve", "--port", str(port)], env=env, output=log)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", process=process, log=log)
        yield Server(url=f"http://127.0.0.1:{port}", port=port, env=env, log=log)
    finally:
        stop_process(process)


@pytest.fixture(scope="session")
def slow_llm() -> Iterator[str]:
    """Base URL of the slow OpenAI-compatible model server."""
    with processes.slow_llm(pause=SLOW_PAUSE, words=SLOW_WORDS) as url:
        yield url


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, slow_llm: str) -> Iterator[Server]:
    """One `atrium serve` process for the session."""
    yield from _serve(tmp_path_factory.mktemp("client-server"), "atrium", slow_llm)


@pytest.fixture
def api_key(server: Server) -> str:
    """A key of a fresh account: the test sees only what it makes."""
    return server.new_key()


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    """The server as seen by a user whose ATRIUM_API_KEY is a fresh account's key."""
    return Server(
        url=server.url,
        port=server.port,
        env={**server.env, "ATRIUM_API_KEY": api_key},
        log=server.log,
    )


@pytest.fixture
def atrium(server: Server, api_key: str) -> Iterator[Client]:
    with Client(server.url, api_key) as client:
        yield client


@pytest.fixture
async def async_atrium(server: Server, api_key: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(server.url, api_key) as client:
        yield client


@pytest.fixture
def slow_agent(atrium: Client) -> str:
    """An agent on the slow model (no tools): its runs stream ~30 words over ~3 seconds."""
    agent = atrium.agents.create("slow", config={"model": SLOW_MODEL, "tools": []})
    return agent.agent_id
