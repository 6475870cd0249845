"""The `atrium` command as a user runs it: a real server process, keys made and revoked by CLI.

The first-start test runs `atrium serve` as the installed script, twice (what it prints and
does on its first and later starts, as a user's shell runs it). The other tests' servers and
commands run through `tests.processes`: the same `atrium.cli:app` in a process of its own,
forked from a forkserver that imported the libraries once, ~1.5 s of CPU less per server
(`ATRIUM_TEST_SPAWN=exec` runs them as the installed script too).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from alembic.script import ScriptDirectory

from atrium.db.migrate import alembic_config, upgrade
from atrium.settings import Settings
from tests.conftest import BACKENDS, database_of_its_own
from tests.processes import (
    ATRIUM,
    Process,
    atrium_env,
    free_port,
    run_atrium,
    start_atrium,
    wait_for_http,
)

KEY_PATTERN = re.compile(r"atr_[A-Za-z0-9_-]{20,}")


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    return atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'data' / 'atrium.db'}",
        PYTHONUNBUFFERED="1",
    )


def run_cli(
    env: dict[str, str], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_atrium(args, env=env, cwd=cwd)


class Server:
    """`atrium serve` on a free port, answering; `script=True`: the installed console script."""

    def __init__(self, env: dict[str, str], log: Path, *, script: bool) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        args = ["serve", "--port", str(self.port)]
        self.process: Process
        if script:
            with log.open("w") as out:
                self.process = subprocess.Popen(
                    [ATRIUM, *args], env=env, stdout=out, stderr=subprocess.STDOUT
                )
        else:
            self.process = start_atrium(args, env=env, output=log)
        wait_for_http(self.url + "/healthz", process=self.process, log=log)

    def output(self) -> str:
        return self.log.read_text()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)


@pytest.fixture
def serve(cli_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """`serve()`: a server forked from the forkserver; `serve(script=True)`: the script's."""
    servers: list[Server] = []

    def started(*, script: bool = False) -> Server:
        server = Server(cli_env, tmp_path / f"serve-{len(servers)}.log", script=script)
        servers.append(server)
        return server

    yield started
    for server in servers:
        if server.process.poll() is None:
            server.stop()


def account(url: str, key: str) -> httpx.Response:
    return httpx.get(url + "/v1/account", headers={"Authorization": f"Bearer {key}"}, timeout=5)


def test_first_start_prints_a_key_that_authenticates(serve: Callable[..., Server]) -> None:
    server = serve(script=True)
    keys = KEY_PATTERN.findall(server.output())
    assert len(keys) == 1, server.output()
    # Which model new agents get, on the defaults (test_serve_says_which_model: another one).
    assert "Default model: atrium:offline (built in" in server.output()
    response = account(server.url, keys[0])
    assert response.status_code == 200
    assert response.json()["account"]["name"] == "default"
    server.stop()

    again = serve(script=True)
    assert KEY_PATTERN.findall(again.output()) == [], "a key is printed only on the first start"
    assert account(again.url, keys[0]).status_code == 200


def test_serve_says_which_model_new_agents_get(
    cli_env: dict[str, str], serve: Callable[..., Server]
) -> None:
    # The default (atrium:offline) is checked on the first start of the test above.
    cli_env["ATRIUM_DEFAULT_MODEL"] = "openai:gpt-4o-mini"
    assert (
        "Default model: openai:gpt-4o-mini (unusable: openai models need ATRIUM_OPENAI_API_KEY"
        in serve().output()
    )


def test_bootstrap_key_can_be_given(cli_env: dict[str, str], serve: Callable[..., Server]) -> None:
    cli_env["ATRIUM_BOOTSTRAP_KEY"] = "atr_given-by-the-operator-0123456789"
    server = serve()
    key = "atr_given-by-the-operator-0123456789"
    assert account(server.url, key).status_code == 200
    # No ATRIUM_PUBLIC_URL: a run's links point at this server's port, not the default 8000.
    created = httpx.post(
        server.url + "/api/v1/public/agent/runs",
        json={"prompt": "hello"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    assert created.json()["status_url"].startswith(server.url + "/"), created.json()


def test_keys_create_list_revoke(cli_env: dict[str, str], serve: Callable[..., Server]) -> None:
    server = serve()
    created = run_cli(cli_env, "keys", "create", "--account", "acme", "--tier", "premium")
    assert created.returncode == 0, created.stderr
    # Only the key on stdout, for `KEY=$(atrium keys create …)`; what it is on stderr.
    key = created.stdout.strip()
    assert KEY_PATTERN.fullmatch(key), created.stdout
    assert "for account 'acme' (premium)" in created.stderr
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


def test_keys_commands_print_json(cli_env: dict[str, str]) -> None:
    created = run_cli(cli_env, "keys", "create", "--account", "robot", "--json")
    assert created.returncode == 0, created.stderr
    issued = json.loads(created.stdout)
    assert KEY_PATTERN.fullmatch(issued["key"]) and issued["account"] == "robot"
    assert issued["tier"] == "standard"
    listed = json.loads(run_cli(cli_env, "keys", "list", "--json").stdout)["data"]
    [robot] = [key for key in listed if key["account"] == "robot"]
    assert robot["key_id"] == issued["key_id"] and robot["revoked_at"] is None
    assert issued["key"].startswith(robot["prefix"]) and issued["key"] not in str(listed)
    revoked = run_cli(cli_env, "keys", "revoke", str(issued["key_id"]), "--json")
    assert json.loads(revoked.stdout) == {"key_id": issued["key_id"], "revoked": True}
    listed = json.loads(run_cli(cli_env, "keys", "list", "--json").stdout)["data"]
    assert [key["revoked_at"] for key in listed if key["account"] == "robot"] != [None]


def test_bad_tier_is_refused(cli_env: dict[str, str]) -> None:
    result = run_cli(cli_env, "keys", "create", "--tier", "gold")
    assert result.returncode == 2
    assert "tier" in result.stdout


def _revisions() -> list[str]:
    """The migrations' revisions, oldest first."""
    scripts = ScriptDirectory.from_config(alembic_config(Settings(_env_file=None)))
    return [script.revision for script in reversed(list(scripts.walk_revisions()))]


@pytest.fixture(params=BACKENDS)
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own with no tables yet."""
    async with database_of_its_own(request.param, tmp_path / "data" / "atrium.db") as url:
        yield url


def test_migrate_says_what_it_applied(empty_database: str) -> None:
    """On an empty database every migration is applied and counted; on a later run it says
    where the database already is; after a partial upgrade, only what was missing."""
    revisions = _revisions()
    env = atrium_env(ATRIUM_DATABASE_URL=empty_database, PYTHONUNBUFFERED="1")

    first = run_cli(env, "migrate")
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == (
        f"Applied {len(revisions)} migrations ({revisions[0]} → {revisions[-1]})."
    )
    second = run_cli(env, "migrate")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == f"Database is up to date at {revisions[-1]}."


def test_migrate_applies_only_what_is_missing(tmp_path: Path) -> None:
    """A database one revision behind gets that revision alone."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}"
    settings = Settings(database_url=url, _env_file=None)
    *_, previous, newest = _revisions()
    upgrade(settings, previous)
    result = run_cli(atrium_env(ATRIUM_DATABASE_URL=url), "migrate")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"Applied 1 migration ({newest})."


def test_the_default_database_is_the_same_from_every_folder(tmp_path: Path) -> None:
    """Without ATRIUM_DATABASE_URL the database is one file in the user's data directory: a
    key made from one folder is listed from another, and no folder gets an atrium.db of its
    own. Every server-side command says which database it opened (on stderr)."""
    env = atrium_env(XDG_DATA_HOME=str(tmp_path / "data-home"), PYTHONUNBUFFERED="1")
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    expected = tmp_path / "data-home" / "atrium" / "atrium.db"

    created = run_cli(env, "keys", "create", "--account", "travelling", cwd=first)
    assert created.returncode == 0, created.stderr
    assert f"Database: {expected}" in created.stderr
    assert KEY_PATTERN.findall(created.stdout), created.stdout

    listing = run_cli(env, "keys", "list", cwd=second)
    assert listing.returncode == 0, listing.stderr
    assert "travelling" in listing.stdout
    assert f"Database: {expected}" in listing.stderr
    assert expected.exists()
    assert list(first.iterdir()) == [] and list(second.iterdir()) == []


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
