"""The files of an embedded deployment are its owner's alone: `atrium serve` on a fresh data
directory, under the common umask 022, makes the folder 0700 and the database, its `-wal` and
`-shm` files and the secrets' key file 0600. A database file it did not make keeps its mode,
with a warning when other users may read it."""

from __future__ import annotations

import logging
import stat
import subprocess
from pathlib import Path

import httpx
import pytest

from atrium.db.migrate import upgrade
from atrium.settings import Settings
from tests.processes import ATRIUM, atrium_env, free_port, new_account_key, wait_for_http


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_fresh_data_directory_is_private_under_umask_022(tmp_path: Path) -> None:
    env = atrium_env(XDG_DATA_HOME=str(tmp_path / "data-home"), PYTHONUNBUFFERED="1")
    folder = tmp_path / "data-home" / "atrium"
    port = free_port()
    log = tmp_path / "serve.log"
    # The installed script in a process of its own: the umask is the one it is started with.
    with log.open("w") as out:
        server = subprocess.Popen(
            [ATRIUM, "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            umask=0o022,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_http(url + "/healthz", process=server, log=log)
        env["ATRIUM_DATABASE_URL"] = f"sqlite+aiosqlite:///{folder / 'atrium.db'}"
        key = new_account_key(env)
        created = httpx.post(
            url + "/v1/webhooks",
            json={"url": "https://hooks.example.test/a"},
            headers={"Authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert created.status_code == 201, created.text  # a secret stored: the key file made
        modes = {path.name: _mode(path) for path in folder.iterdir()}
    finally:
        server.terminate()
        server.wait(timeout=15)
    assert _mode(folder) == 0o700
    assert modes == {
        "atrium.db": 0o600,
        "atrium.db-wal": 0o600,
        "atrium.db-shm": 0o600,
        "atrium.db.secrets-key": 0o600,
    }, log.read_text()


def test_a_database_file_open_to_others_is_left_as_it_is_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "chosen"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    database = folder / "atrium.db"
    database.touch()
    database.chmod(0o644)
    with caplog.at_level(logging.WARNING, logger="atrium"):
        upgrade(Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{database}"))
    assert _mode(folder) == 0o755 and _mode(database) == 0o644
    warnings = [
        record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING
    ]
    assert any(str(database) in message and "chmod 600" in message for message in warnings), (
        warnings
    )
