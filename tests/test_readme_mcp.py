"""README's "MCP tools in two minutes", run as written: atrium started with the README's
settings, `examples/mcp_server.py` started with the README's command, the README's client
commands run by bash, and the README's shown output found in what they print. Only what a test
must change is changed: ports (free ones instead of 8000/8765), the key, `.venv/bin/` (this
test's own environment), and `make run` (its serve command is held by tests/test_makefile.py).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import (
    ATRIUM,
    atrium_env,
    free_port,
    listening,
    new_account_key,
    stop_process,
    wait_for_http,
)

ROOT = Path(__file__).parents[1]
SECTION = "## MCP tools in two minutes"
BIN = str(Path(ATRIUM).parent) + "/"


def _section() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index(SECTION)
    end = readme.find("\n## ", start + len(SECTION))
    return readme[start : end if end != -1 else None]


def _blocks() -> list[tuple[str, str]]:
    """The section's fenced blocks: (language, text)."""
    return re.findall(r"```(\w*)\n(.*?)```", _section(), flags=re.S)


def _command_lines(text: str) -> list[str]:
    """A block's commands without their comments (a trailing `# …` says which terminal)."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\s+# .*$", "", line).rstrip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def _ours(command: str) -> str:
    return command.replace(".venv/bin/", BIN)


def test_the_section_says_what_a_loopback_mcp_url_needs() -> None:
    kinds = [kind for kind, _ in _blocks()]
    assert kinds == ["sh", "sh", "sh", "text"]
    start, server, _client, _shown = (text for _, text in _blocks())
    assert _command_lines(start) == ["ATRIUM_ALLOW_PRIVATE_TARGETS=true make run"]
    assert "ATRIUM_ALLOW_PRIVATE_TARGETS=true" in (ROOT / "examples" / "mcp_server.py").read_text()
    assert _command_lines(server)[-1] == ".venv/bin/python examples/mcp_server.py"


@pytest.fixture
def atrium(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """`atrium serve` with the settings the README's first block gives it; (url, key)."""
    [start] = _command_lines(_blocks()[0][1])
    settings = dict(word.split("=", 1) for word in shlex.split(start) if "=" in word)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}", **settings
    )
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [ATRIUM, "serve", "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            wait_for_http(f"{url}/healthz", process=process, log=log)
            yield url, new_account_key(env)
        finally:
            stop_process(process)


@pytest.fixture
def example_server(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The README's second block: the example MCP server, on a free port; (port, its log)."""
    lines = _command_lines(_blocks()[1][1])
    # fastmcp's server half is a dev dependency of atrium: installed already, never fetched.
    assert lines[:-1] == [".venv/bin/pip install -q fastmcp"]
    pytest.importorskip("fastmcp.server", reason="fastmcp (the server) is not installed")
    port = free_port()
    log = tmp_path / "mcp.log"
    with listening([*shlex.split(_ours(lines[-1])), "--port", str(port)], port, log, cwd=ROOT):
        yield port, log


def test_the_readme_steps_run_and_print_what_it_shows(
    atrium: tuple[str, str], example_server: tuple[int, Path], tmp_path: Path
) -> None:
    url, key = atrium
    port, server_log = example_server
    script = _ours(_blocks()[2][1])
    script = script.replace("atr_…", key).replace("127.0.0.1:8765", f"127.0.0.1:{port}")
    env = {**atrium_env(ATRIUM_URL=url), "COLUMNS": "80", "PATH": os.environ["PATH"]}
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    # Every line the README shows is printed (tool lines on stderr without a terminal).
    for line in _blocks()[3][1].strip().splitlines():
        assert line in printed, f"{line!r} not in:\n{printed}"
    assert "completed run_" in printed
    # The calls reached the example server with their arguments.
    seen = server_log.read_text()
    assert 'called lookup {"word": "atrium"}' in seen, seen
    assert 'called add {"a": 2, "b": 40}' in seen, seen
