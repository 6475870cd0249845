"""The client commands run as a user runs them: `atrium …` processes against a real server."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from atrium.client import Client
from tests.client.conftest import SLOW_WORDS, Server
from tests.client.proxy import DroppingProxy
from tests.processes import ATRIUM, run_atrium

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ANSWER = " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))


@pytest.fixture
def proxy(server: Server) -> Iterator[DroppingProxy]:
    dropping = DroppingProxy(server.port, after=6, drops=1)
    yield dropping
    dropping.close()


def run_in_terminal(env: dict[str, str], *args: str, timeout: float = 60) -> tuple[int, str]:
    """Run `atrium ARGS` attached to a pseudo-terminal (100 columns); its exit status and
    everything it drew."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    process = subprocess.Popen(
        [ATRIUM, *args],
        env={**env, "TERM": "xterm-256color"},
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        close_fds=True,
    )
    os.close(terminal)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                data = os.read(controller, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    os.close(controller)
    status = process.wait(timeout=10)
    return status, b"".join(chunks).decode("utf-8", "replace")


def test_run_shows_the_answer_artifacts_and_credits(user: Server, api_key: str) -> None:
    result = user.cli("run", "Plan the launch")
    assert result.returncode == 0, result.stderr
    with Client(user.url, api_key) as client:
        (run,) = client.runs.list().data
    assert run.result and run.result in result.stdout, "the model's text is printed"
    assert result.stdout.count(run.result) == 1
    assert "answer.md" in result.stdout, "artifacts are listed at the end"
    assert "Credits:" in result.stdout
    assert run.billing is not None
    assert f"{run.billing.credits:.6f}".rstrip("0") in result.stdout
    assert f"atrium artifacts download {run.run_id}" in result.stdout


def test_runs_list_get_and_artifacts_download(user: Server, api_key: str, tmp_path: Path) -> None:
    with Client(user.url, api_key) as client:
        run = client.runs.wait(client.runs.create("Write notes").run_id, timeout=30)
    assert run.artifacts

    listed = user.cli("runs", "list")
    assert listed.returncode == 0, listed.stderr
    assert run.run_id in listed.stdout and "completed" in listed.stdout

    shown = user.cli("runs", "get", run.run_id)
    assert shown.returncode == 0 and run.result and run.result in shown.stdout

    target = tmp_path / "artifacts"
    # On a console narrower than the path, the path is still printed whole, on one line.
    narrow = replace(user, env={**user.env, "COLUMNS": "40"})
    downloaded = narrow.cli("artifacts", "download", run.run_id, "-o", str(target))
    assert downloaded.returncode == 0, downloaded.stderr
    saved = target / "answer.md"
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == run.artifacts[0].sha256
    assert str(saved) in downloaded.stdout

    missing = user.cli("artifacts", "download", "run_nope", "-o", str(target))
    assert missing.returncode == 1
    assert "NOT_FOUND" in missing.stderr


def test_no_follow_prints_the_id_and_follow_attaches(user: Server) -> None:
    started = user.cli("run", "Later", "--no-follow")
    assert started.returncode == 0, started.stderr
    run_id = next(word for word in started.stdout.split() if word.startswith("run_"))
    followed = user.cli("runs", "follow", run_id)
    assert followed.returncode == 0, followed.stderr
    assert "Later" in followed.stdout and "completed" in followed.stdout


def test_run_follows_through_a_dropped_connection(
    user: Server, proxy: DroppingProxy, slow_agent: str
) -> None:
    env = {**user.env, "ATRIUM_URL": proxy.url}
    result = run_atrium(["run", "Keep going", "--agent", slow_agent, "--follow"], env=env)
    assert result.returncode == 0, result.stderr
    assert proxy.dropped == 1 and proxy.last_event_ids == [None, "6"]
    assert "resuming after event 6" in result.stderr
    assert result.stdout.count(ANSWER) == 1, "every word once, in order"
    assert result.stdout.count("word17 ") == 1


def test_run_live_in_a_terminal(user: Server, proxy: DroppingProxy, slow_agent: str) -> None:
    env = {**user.env, "ATRIUM_URL": proxy.url}
    status, screen = run_in_terminal(env, "run", "Show me", "--agent", slow_agent)
    assert status == 0, screen
    assert "running" in screen and "completed" in screen
    assert "⠋" in screen or "⠙" in screen, "a spinner turns while the run goes"
    assert "model request 1" in screen, "the status line names the step"
    assert "resuming after event 6" in screen or "resumed ×1" in screen
    assert proxy.last_event_ids == [None, "6"]
    plain = ANSI.sub("", screen)
    firsts = [plain.find(f"word{i} ") for i in range(1, SLOW_WORDS)]
    assert -1 not in firsts and firsts == sorted(firsts), "the text arrives word by word"
    end = plain.rsplit("completed", 1)[-1]
    assert "Credits:" in end and "1 model request" in end


TOOL_SCRIPT = (
    'Keep a note.\ncall write_artifact {"name": "note.md", "content": "x"}\n'
    'call read_artifact {"name": "nope.md"}'
)


def test_run_prints_a_line_per_tool_call_and_result(user: Server) -> None:
    # In a terminal: above the live area, in the order they happen.
    status, screen = run_in_terminal(user.env, "run", TOOL_SCRIPT)
    assert status == 0, screen
    plain = ANSI.sub("", screen)
    lines = [
        '→ write_artifact {"name": "note.md", "content": "x"',  # then its default mime_type
        "← write_artifact: ",
        '→ read_artifact {"name": "nope.md"}',
        "✗ read_artifact failed: ",  # a built-in tool refusing its arguments asks for a retry
    ]
    found = [plain.find(line) for line in lines]
    assert -1 not in found and found == sorted(found), plain
    # Without a terminal: the same lines on stderr, the model's text alone on stdout.
    piped = user.cli("run", TOOL_SCRIPT)
    assert piped.returncode == 0, piped.stderr
    assert all(line in piped.stderr for line in lines), piped.stderr
    assert "→" not in piped.stdout and "write_artifact returned: " in piped.stdout


def test_run_prints_the_json_answer_of_an_output_schema(user: Server, tmp_path: Path) -> None:
    # No text is streamed for a structured answer: the finished run's JSON is printed.
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": "object", "properties": {"city": {"type": "string"}}}')
    created = user.cli("agents", "create", "typed", "--output-schema-file", str(schema), "--json")
    assert created.returncode == 0, created.stderr
    agent_id = json.loads(created.stdout)["agent_id"]
    done = user.cli("run", "--agent", agent_id, 'output {"city": "Paris"}')
    assert done.returncode == 0, done.stderr
    assert '"city": "Paris"' in done.stdout


def test_agents_create_and_list(user: Server) -> None:
    created = user.cli(
        "agents", "create", "researcher", "--description", "digs", "--temperature", "0.3"
    )
    assert created.returncode == 0, created.stderr
    agent_id = next(word for word in created.stdout.split() if word.startswith("agt_"))
    listed = user.cli("agents", "list")
    assert agent_id in listed.stdout and "researcher" in listed.stdout and "0.3" in listed.stdout

    bad = user.cli("agents", "create", "hot", "--temperature", "9")
    assert bad.returncode == 1
    assert "INVALID_PARAMETER" in bad.stderr and "config.temperature" in bad.stderr

    used = user.cli("run", "Hello", "--agent", agent_id)
    assert used.returncode == 0, used.stderr


def test_usage_prints_a_table_and_a_chart(user: Server) -> None:
    assert user.cli("run", "Something to count").returncode == 0
    today = datetime.now(UTC).date()
    shown = user.cli("usage", "--from", f"{today.replace(day=1)}", "--to", f"{today}")
    assert shown.returncode == 0, shown.stderr
    assert f"Usage {today.replace(day=1)} → {today}" in shown.stdout
    assert "total" in shown.stdout
    rows = [line for line in shown.stdout.splitlines() if line.startswith(str(today))]
    assert len(rows) == 1 and "█" in rows[0], "today's bar is drawn"
    assert today.day == 1 or any(
        line.startswith(str(today.replace(day=1))) and "█" not in line
        for line in shown.stdout.splitlines()
    ), "an idle day has no bar"

    runs = user.cli("usage", "--metric", "runs")
    assert runs.returncode == 0 and "runs per day" in runs.stdout

    backwards = user.cli("usage", "--from", f"{today}", "--to", "2000-01-01")
    assert backwards.returncode == 1 and "INVALID_PARAMETER" in backwards.stderr
    malformed = user.cli("usage", "--from", "yesterday")
    assert malformed.returncode == 2


def test_configuration_errors_are_explained(server: Server) -> None:
    no_key = {k: v for k, v in server.env.items() if k != "ATRIUM_API_KEY"}
    missing = run_atrium(["runs", "list"], env=no_key)
    assert missing.returncode == 2 and "ATRIUM_API_KEY" in missing.stderr

    wrong = server.cli("runs", "list", "--api-key", "atr_wrong-key-000000000000000000000")
    assert wrong.returncode == 1 and "UNAUTHORIZED" in wrong.stderr

    down = server.cli("agents", "list", "--url", "http://127.0.0.1:9")
    assert down.returncode == 1 and "cannot reach the server" in down.stderr


def test_help_lists_the_client_commands() -> None:
    shown = subprocess.run([ATRIUM, "--help"], capture_output=True, text=True, timeout=60)
    commands = ("run", "runs", "threads", "artifacts", "agents", "webhooks", "domains", "spaces")
    for command in (*commands, "usage", "serve", "keys"):
        assert f" {command} " in shown.stdout
    assert sys.executable
