"""`atrium run` asks in the terminal when the run waits for its caller; `atrium runs act RUN_ID`
answers later. Run as a user runs them: `atrium …` processes against a real server."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from atrium.client import Client
from atrium.client._view import ToolLines
from atrium.client.models import RunRequiresAction, ToolReturned, parse_event
from tests.client.conftest import Server
from tests.processes import run_atrium

LOOKUP = {
    "type": "function",
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
}


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    return Server(
        url=server.url,
        port=server.port,
        env={**server.env, "ATRIUM_API_KEY": api_key},
        log=server.log,
    )


def _atrium(user: Server, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run_atrium(args, env=user.env, input=stdin)


def test_run_asks_for_a_function_output(user: Server, atrium: Client) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    done = _atrium(
        user, "run", 'call lookup {"word": "atrium"}', "--agent", agent.agent_id, stdin="a hall\n"
    )
    assert done.returncode == 0, done.stderr
    assert 'lookup {"word": "atrium"}' in done.stderr  # the call was shown
    assert "lookup returned: a hall" in done.stdout


def test_run_without_an_answer_points_to_runs_act(
    user: Server, atrium: Client, tmp_path: Path
) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    left = _atrium(user, "run", 'call lookup {"word": "later"}', "--agent", agent.agent_id)
    assert left.returncode == 3, left.stderr
    match = re.search(r"atrium runs act (run_\S+)", left.stderr)
    assert match is not None, left.stderr
    run_id = match.group(1)
    waiting = atrium.runs.get(run_id)
    assert waiting.waiting and waiting.required_action is not None
    call_id = waiting.required_action.tool_calls[0].id

    answer = tmp_path / "answer.txt"
    answer.write_text("from a file")
    acted = _atrium(user, "runs", "act", run_id, "--output-file", f"{call_id}={answer}")
    assert acted.returncode == 0, acted.stderr
    assert "queued" in acted.stdout
    done = atrium.runs.wait(run_id, timeout=30)
    assert done.status == "completed"
    assert "lookup returned: from a file" in str(done.result)

    again = _atrium(user, "runs", "act", run_id)
    assert again.returncode == 1 and "not waiting" in again.stderr


def test_runs_act_asks_in_the_terminal(user: Server, atrium: Client, tmp_path: Path) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    run = atrium.runs.create('call lookup {"word": "ask"}', agent_id=agent.agent_id)
    assert atrium.runs.wait(run.run_id, timeout=30).waiting
    typed = tmp_path / "typed.txt"
    typed.write_text("read with @")
    acted = _atrium(user, "runs", "act", run.run_id, stdin=f"@{typed}\n")
    assert acted.returncode == 0, acted.stderr
    done = atrium.runs.wait(run.run_id, timeout=30)
    assert "lookup returned: read with @" in str(done.result)


def test_runs_get_shows_what_a_waiting_run_waits_for(user: Server, atrium: Client) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    run = atrium.runs.create('call lookup {"word": "shown"}', agent_id=agent.agent_id)
    waiting = atrium.runs.wait(run.run_id, timeout=30)
    assert waiting.waiting and waiting.required_action is not None
    call_id = waiting.required_action.tool_calls[0].id
    shown = _atrium(user, "runs", "get", run.run_id)
    assert shown.returncode == 0, shown.stderr
    assert "It waits for you" in shown.stdout
    assert f'lookup {{"word": "shown"}}  {call_id}' in shown.stdout
    assert f"Answer it: atrium runs act {run.run_id}" in shown.stdout


def test_a_denied_approval_is_named_as_the_model_sees_it() -> None:
    """A denied MCP call is answered without ever being called (no `tool.called` gives its
    server label): the wait's pending call names its server."""
    created = {"run_id": "run_x", "created_at": "2026-11-28T10:00:00Z"}
    waiting = parse_event(
        1,
        "run.requires_action",
        {
            **created,
            "status": "requires_action",
            "required_action": {
                "type": "tool_calls",
                "expires_at": "2026-11-29T10:00:00Z",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "kind": "approval",
                        "name": "add",
                        "server_label": "glossary",
                        "arguments": {"a": 1, "b": 2},
                    }
                ],
            },
        },
    )
    denied = parse_event(
        2,
        "tool.returned",
        {
            **created,
            "tool_call_id": "call_1",
            "name": "add",
            "output": "denied: not today",
            "is_error": True,
        },
    )
    assert isinstance(waiting, RunRequiresAction) and isinstance(denied, ToolReturned)
    lines = ToolLines()
    lines.expect(waiting.required_action)
    assert str(lines.line(denied)) == "✗ glossary_add failed: denied: not today"
