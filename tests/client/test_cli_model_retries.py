"""`atrium run` shows a model answer that was sent back apart from the answer that follows it.

The slow model answers with words where the agent's output schema wants JSON: pydantic-ai
sends the answer back to the model to try again, and the run fails once its retries are used
up. The command shows each answer on its own line, with a note before the retry's text."""

from __future__ import annotations

from atrium.client import Client
from tests.client.conftest import SLOW_MODEL, SLOW_WORDS, Server
from tests.client.test_cli import ANSI, run_in_terminal
from tests.processes import run_atrium

ANSWER = " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))
SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
GLUED = f"word{SLOW_WORDS}word1"


def _json_agent(atrium: Client) -> str:
    config = {"model": SLOW_MODEL, "tools": [], "output_schema": SCHEMA}
    return atrium.agents.create("json", config=config).agent_id


def test_a_retried_answer_starts_on_a_line_of_its_own(
    server: Server, api_key: str, atrium: Client
) -> None:
    env = {**server.env, "ATRIUM_API_KEY": api_key}
    agent_id = _json_agent(atrium)
    piped = run_atrium(("run", "Give me a title", "--agent", agent_id), env=env, timeout=90)
    assert piped.returncode == 1, piped.stderr
    assert "OUTPUT_INVALID" in piped.stdout
    assert GLUED not in piped.stdout
    assert piped.stdout.count(f"{ANSWER}\n") == 2, piped.stdout
    assert "retrying (model request 2)" in piped.stderr

    status, screen = run_in_terminal(env, "run", "Give me a title", "--agent", agent_id)
    assert status == 1, screen
    plain = ANSI.sub("", screen)
    assert GLUED not in plain.replace("\r", "").replace("\n", "")
    note = plain.find("retrying (model request 2)")
    assert note != -1, plain
    assert plain.find("word1 ") < note < plain.rfind("word1 "), "the note comes between them"
