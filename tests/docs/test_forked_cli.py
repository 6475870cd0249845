"""A page's `.venv/bin/atrium` (tests/docs/forked_cli.py) answers as the installed script does,
and a command dies with its script."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs import forked_cli
from tests.docs.runner import ROOT, VENV
from tests.processes import atrium_env, stop_process

REAL = VENV / "bin" / "atrium"


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("forked")
    socket_path = Path("/tmp") / f"atrium-cli-test-{os.getpid()}"
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.docs.forked_cli", str(socket_path)],
        cwd=ROOT,
        env=atrium_env(PYTHONPATH=str(ROOT)),
    )
    try:
        deadline = time.monotonic() + 60
        while not socket_path.exists():
            assert server.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        forked_cli.install(folder, socket_path, REAL)
        yield folder / "atrium"
    finally:
        stop_process(server)
        socket_path.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("args", "variables"),
    [
        (["runs", "list"], {}),  # no key: exit 2 and the hint
        (["runs", "list"], {"ATRIUM_API_KEY": "atr_x", "ATRIUM_URL": "http://127.0.0.1:9"}),
        (["agents", "create", "--help"], {"COLUMNS": "70"}),
        (["--help"], {}),  # not a client command: the installed script itself
    ],
)
def test_a_command_prints_and_exits_as_the_installed_script(
    script: Path, args: list[str], variables: dict[str, str], tmp_path: Path
) -> None:
    env = atrium_env(NO_COLOR="1", **variables)
    real = subprocess.run([REAL, *args], env=env, cwd=tmp_path, capture_output=True, text=True)
    forked = subprocess.run([script, *args], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


def test_stdin_is_the_scripts(script: Path) -> None:
    """What a page pipes into a command reaches it: here a schema read from /dev/stdin, sent
    in the command's request."""
    with socket.socket() as server:  # reads the request, never answers
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        env = atrium_env(ATRIUM_API_KEY="atr_x", ATRIUM_URL=url)
        args = [script, "agents", "create", "Piped", "--output-schema-file", "/dev/stdin"]
        started = subprocess.Popen(args, env=env, stdin=subprocess.PIPE)
        try:
            assert started.stdin is not None
            started.stdin.write(b'{"type": "object", "title": "piped in by the page"}')
            started.stdin.close()
            server.settimeout(60)
            connection, _ = server.accept()
            with connection:
                connection.settimeout(30)
                request = b""
                while b"piped in by the page" not in request and (chunk := connection.recv(65_536)):
                    request += chunk
            assert b"piped in by the page" in request
        finally:
            stop_process(started)


def test_a_killed_script_takes_its_command_with_it(script: Path, tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts, never answers: the command waits
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = atrium_env(ATRIUM_API_KEY="atr_x", ATRIUM_URL=url)
        started = subprocess.Popen([script, "runs", "list"], env=env)
        silent.settimeout(60)
        connection, _ = silent.accept()  # the forked command asked
        with connection:
            connection.settimeout(30)
            # Its request first: a kill between connect and send would close the connection
            # before any byte, which says nothing about what the kill did.
            assert connection.recv(65_536)
            started.send_signal(signal.SIGKILL)
            started.wait()
            assert connection.recv(65_536) == b""  # then its end closed: it is gone
