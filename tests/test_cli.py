"""The `atrium` command as a user runs it: a real server process, keys made and revoked by CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import ATRIUM, atrium_env, free_port, wait_for_http

KEY_PATTERN = re.compile(r"atr_[A-Za-z0-9_-]{20,}")


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    return atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'data' / 'atrium.db'}",
        PYTHONUNBUFFERED="1",
    )


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ATRIUM, *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )


class Server:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self._out = log.open("w")
        self.process = subprocess.Popen(
            [ATRIUM, "serve", "--port", str(self.port)],
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wait_for_http(self.url + "/healthz", process=self.process, log=log)

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        self._out.close()


@pytest.fixture
def serve(cli_env: dict[str, str], tmp_path: Path) -> Iterator[type[Server]]:
    servers: list[Server] = []

    class Started(Server):
        def __init__(self) -> None:
            super().__init__(cli_env, tmp_path / f"serve-{len(servers)}.log")
            servers.append(self)

    yield Started
    for server in servers:
        if server.process.poll() is None:
            server.stop()


def account(url: str, key: str) -> httpx.Response:
    return httpx.get(url + "/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=5)


def test_first_start_prints_a_key_that_authenticates(serve: type[Server]) -> None:
    server = serve()
    keys = KEY_PATTERN.findall(server.output())
    assert len(keys) == 1, server.output()
    response = account(server.url, keys[0])
    assert response.status_code == 200
    assert response.json()["account"]["name"] == "default"
    server.stop()

    again = serve()
    assert KEY_PATTERN.findall(again.output()) == [], "a key is printed only on the first start"
    assert account(again.url, keys[0]).status_code == 200


def test_bootstrap_key_can_be_given(cli_env: dict[str, str], serve: type[Server]) -> None:
    cli_env["ATRIUM_BOOTSTRAP_KEY"] = "atr_given-by-the-operator-0123456789"
    server = serve()
    assert account(server.url, "atr_given-by-the-operator-0123456789").status_code == 200


def test_keys_create_list_revoke(cli_env: dict[str, str], serve: type[Server]) -> None:
    server = serve()
    created = run_cli(cli_env, "keys", "create", "--account", "acme", "--tier", "premium")
    assert created.returncode == 0, created.stderr
    key = KEY_PATTERN.findall(created.stdout)[-1]
    response = account(server.url, key)
    assert response.status_code == 200
    assert response.json()["account"]["name"] == "acme"
    assert response.headers["x-ratelimit-limit"] == "10000"

    listing = run_cli(cli_env, "keys", "list")
    assert listing.returncode == 0
    assert "acme" in listing.stdout and "premium" in listing.stdout
    assert key not in listing.stdout, "a key is never shown again"

    key_id = str(response.json()["key"]["id"])
    revoked = run_cli(cli_env, "keys", "revoke", key_id)
    assert revoked.returncode == 0, revoked.stderr
    assert account(server.url, key).status_code == 401
    assert run_cli(cli_env, "keys", "revoke", "999999").returncode == 1


def test_bad_tier_is_refused(cli_env: dict[str, str]) -> None:
    result = run_cli(cli_env, "keys", "create", "--tier", "gold")
    assert result.returncode == 2
    assert "tier" in result.stdout


def test_migrate_is_idempotent(cli_env: dict[str, str]) -> None:
    assert run_cli(cli_env, "migrate").returncode == 0
    second = run_cli(cli_env, "migrate")
    assert second.returncode == 0
    assert "up to date" in second.stdout


def test_client_commands_start_without_the_server() -> None:
    """`atrium run` and the other client commands import neither the database layer nor the
    web framework nor the agent library: they are most of a process's start-up."""
    probe = (
        "import sys; from atrium.cli import app; "
        "print(sorted({name.split('.')[0] for name in sys.modules}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    for server_side in ("sqlalchemy", "alembic", "fastapi", "uvicorn", "pydantic_ai", "openai"):
        assert f"'{server_side}'" not in loaded, server_side
    assert "'typer'" in loaded and "'httpx'" in loaded  # the probe did load the command
