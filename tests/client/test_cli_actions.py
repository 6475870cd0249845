"""`atrium run` asks in the terminal when the run waits for its caller; `atrium runs act RUN_ID`
answers later. Run as a user runs them: `atrium …` processes against a real server."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from atrium.client import Client
from atrium.client._view import ToolLines
from atrium.client.records import RunRequiresAction, ToolCalled, ToolReturned, parse_event
from tests.client.conftest import Server
from tests.processes import free_port, listening, run_atrium

MCP_ECHO = Path(__file__).parents[2] / "bench" / "mcp_echo.py"

LOOKUP = {
    "type": "function",
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
}


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


@pytest.fixture(scope="module")
def mcp_echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real MCP server (one tool, `echo`) in a process of its own; its URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("mcp-echo") / "mcp_echo.log"
    with listening([sys.executable, str(MCP_ECHO), str(port)], port, log):
        yield f"http://127.0.0.1:{port}/mcp"


def test_a_waiting_approval_and_its_denial_name_the_tool_as_the_model_sees_it(
    user: Server, atrium: Client, mcp_echo: str
) -> None:
    docs = {"type": "mcp", "server_label": "docs", "server_url": mcp_echo}
    agent = atrium.agents.create(
        "careful", config={"tools": [{**docs, "require_approval": "always"}]}
    )
    run = atrium.runs.create('call docs_echo {"text": "rm -rf"}', agent_id=agent.agent_id)
    waiting = atrium.runs.wait(run.run_id, timeout=30)
    assert waiting.waiting and waiting.required_action is not None
    [call] = waiting.required_action.tool_calls
    expires = f"until {waiting.required_action.expires_at:%Y-%m-%d %H:%M} UTC"

    shown = _atrium(user, "runs", "get", run.run_id)
    assert shown.returncode == 0, shown.stderr
    assert "requires_action" in shown.stdout and expires in shown.stdout
    assert f'approval  docs_echo (MCP server docs) {{"text": "rm -rf"}}  {call.id}' in shown.stdout
    assert f"Answer it: atrium runs act {run.run_id}" in shown.stdout
    assert f"atrium runs act {run.run_id} --approve {call.id}; refuse: --deny {call.id}" in (
        shown.stdout
    )

    denied = _atrium(user, "runs", "act", run.run_id, "--deny", call.id, "--reason", "not today")
    assert denied.returncode == 0, denied.stderr
    followed = _atrium(user, "runs", "follow", run.run_id)
    assert followed.returncode == 0, followed.stderr
    assert "✗ docs_echo failed: denied: not today" in followed.stderr
    assert "docs_echo failed: denied: not today" in followed.stdout  # what the model read
    # The event names its server too, as its call's would have: a denied call has none.
    events = atrium.runs.events(run.run_id)
    assert not [event for event in events if isinstance(event, ToolCalled)]
    [returned] = [event for event in events if isinstance(event, ToolReturned)]
    assert (returned.name, returned.server_label, returned.is_error) == ("echo", "docs", True)
