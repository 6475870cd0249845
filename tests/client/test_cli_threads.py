"""`atrium threads …` run as a user runs them, against a real server with the offline model:
the list and its filters, a thread's details, its conversation as a transcript (tool calls,
failed results), forks and deletion, `--json` as the API's shapes, errors naming the option."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import httpx
import pytest

from atrium.client import Client
from tests.client.conftest import Server

THREADS = "/api/v1/public/threads"
LOOKUP = [
    {
        "type": "function",
        "name": "lookup",
        "on_error": "return",
        "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
    }
]


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    """The server as seen by a user whose ATRIUM_API_KEY is a fresh account's key, with output
    wide enough for every column of the threads table."""
    return replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})


def _api(user: Server, path: str) -> Any:
    headers = {"Authorization": f"Bearer {user.env['ATRIUM_API_KEY']}"}
    return httpx.get(f"{user.url}{path}", headers=headers, timeout=30).json()


def _ok(user: Server, *args: str) -> str:
    result = user.cli(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_threads_list_get_messages_fork_and_delete(user: Server, api_key: str) -> None:
    thread_id = _ok(user, "threads", "create", "--metadata", "team=red").strip()
    assert thread_id.startswith("thr_")
    _ok(user, "run", "Name a colour", "--thread", thread_id)
    with Client(user.url, api_key) as atrium:
        first = atrium.runs.list(thread_id=thread_id).data[0].run_id
        # A function call whose output is an error the model reads (`on_error: return`).
        agent = atrium.agents.create("Librarian", config={"tools": LOOKUP})
        waiting = atrium.runs.create(
            'call lookup {"word": "atrium"}', agent_id=agent.agent_id, thread_id=thread_id
        )
        waiting = atrium.runs.wait(waiting.run_id, timeout=60)
        assert waiting.required_action is not None
        (call,) = waiting.required_action.tool_calls
        atrium.runs.submit_actions(
            waiting.run_id, tool_outputs={call.id: "LookupError: no such word"}, failed=[call.id]
        )
        assert atrium.runs.wait(waiting.run_id, timeout=60).status == "completed"
    other = _ok(user, "threads", "create").strip()

    listed = _ok(user, "threads", "list", "--metadata", "team=red")
    assert thread_id in listed and other not in listed and "team=red" in listed
    assert "idle" in listed and waiting.run_id in listed
    assert _ok(user, "threads", "list", "--metadata", "team=blue").strip() == (
        "No threads match these filters."
    )
    paged = user.cli("threads", "list", "--limit", "1")
    assert other in paged.stdout and thread_id not in paged.stdout
    assert "More threads: atrium threads list --limit 1 --cursor " in paged.stderr

    details = _ok(user, "threads", "get", thread_id)
    assert "runs      2" in details and "messages  8" in details
    assert f"last run  {waiting.run_id} completed" in details

    shown = _ok(user, "threads", "messages", thread_id)
    lines = shown.splitlines()
    assert lines[:3] == [f"── run {first}", "user", "  Name a colour"]
    assert '  → write_artifact({"name": "answer.md", ' in shown
    assert "tool write_artifact\n  Saved artifact answer.md (63 bytes, text/markdown)." in shown
    assert '  → lookup({"word": "atrium"})' in shown
    assert "tool lookup failed\n  LookupError: no such word" in shown
    assert all(line == line.rstrip() for line in lines), "no trailing spaces"
    page = user.cli("threads", "messages", thread_id, "--limit", "2")
    assert page.stdout.splitlines() == lines[:5]
    assert f"More: atrium threads messages {thread_id} --limit 2 --cursor " in page.stderr

    fork_id = _ok(user, "threads", "fork", thread_id, "--at", first).strip()
    forked = _ok(user, "threads", "get", fork_id)
    assert f"forked from  {thread_id} at {first}" in forked and "team=red" in forked
    _ok(user, "run", "Name a vegetable of that colour", "--thread", fork_id)
    assert "Offline answer (turn 2)" in _ok(user, "threads", "messages", fork_id)
    copied = _ok(user, "threads", "messages", fork_id).splitlines()
    assert copied[0] == "── copied from the thread this one was forked from"

    assert _ok(user, "threads", "rm", fork_id).strip() == f"Thread {fork_id} deleted."
    gone = user.cli("threads", "get", fork_id)
    assert gone.returncode == 1 and "404 NOT_FOUND" in gone.stderr


def test_threads_json_is_the_api_s(user: Server) -> None:
    thread_id = _ok(user, "threads", "create", "--metadata", "k=v").strip()
    _ok(user, "run", "Name a tree", "--thread", thread_id)
    assert json.loads(_ok(user, "threads", "get", thread_id, "--json")) == _api(
        user, f"{THREADS}/{thread_id}"
    )
    assert json.loads(_ok(user, "threads", "list", "--json")) == _api(user, THREADS)
    everything = json.loads(_ok(user, "threads", "messages", thread_id, "--json"))
    one_page = _api(user, f"{THREADS}/{thread_id}/messages?limit=100")
    assert everything == one_page
    # Fields that do not apply to a role are left out, as the API leaves them out.
    assert "tool_calls" not in everything["data"][0] and "is_error" not in everything["data"][0]
    page = json.loads(_ok(user, "threads", "messages", thread_id, "--limit", "1", "--json"))
    assert page == _api(user, f"{THREADS}/{thread_id}/messages?limit=1")
    fork = json.loads(_ok(user, "threads", "fork", thread_id, "--json"))
    assert fork == _api(user, f"{THREADS}/{fork['id']}")
    deleted = json.loads(_ok(user, "threads", "delete", fork["id"], "--json"))
    assert deleted == {"id": fork["id"], "object": "thread", "deleted": True}


def test_threads_errors_name_the_option(user: Server) -> None:
    thread_id = _ok(user, "threads", "create").strip()
    wrong_run = user.cli("threads", "fork", thread_id, "--at", "run_nope")
    assert wrong_run.returncode == 1
    assert "400 INVALID_PARAMETER" in wrong_run.stderr
    assert "(parameter: --at)" in wrong_run.stderr
    bad_key = user.cli("threads", "list", "--metadata", "no!=x")
    assert bad_key.returncode == 1 and "(parameter: --metadata no!=…)" in bad_key.stderr
    no_value = user.cli("threads", "create", "--metadata", "lonely")
    assert no_value.returncode == 2 and "--metadata" in no_value.stderr
    too_big = user.cli("threads", "create", "--metadata", f"k={'x' * 5000}")
    assert too_big.returncode == 1 and "(parameter: --metadata)" in too_big.stderr
    unknown = user.cli("threads", "messages", "thr_nope")
    assert unknown.returncode == 1 and "404 NOT_FOUND" in unknown.stderr
    assert "No messages yet" in _ok(user, "threads", "messages", thread_id)


def test_threads_compact_and_the_summary_in_the_transcript(user: Server) -> None:
    thread_id = _ok(user, "threads", "create").strip()
    assert "Nothing to compact" in _ok(user, "threads", "compact", thread_id)
    for word in ("one", "two", "three"):
        _ok(user, "run", f"Prompt {word}", "--thread", thread_id)
    done = _ok(user, "threads", "compact", thread_id)
    assert done.startswith("Compacted through run_") and " credits)" in done
    assert "- Prompt one\n- Prompt two\n" in done

    shown = _ok(user, "threads", "messages", thread_id)
    before, summary, after = re.split(r"(?m)^(summary .*)$", shown)
    assert summary == "summary of the conversation above: the model is given it in its place"
    headings = [line for line in before.splitlines() if not line.startswith(("  ", "──"))]
    assert len(headings) == 8
    assert all(line.endswith("  [compacted: the model no longer sees this]") for line in headings)
    assert "compacted" not in after and "  Prompt three" in after

    again = json.loads(_ok(user, "threads", "compact", thread_id, "--json"))
    assert again == {
        "thread_id": thread_id,
        "object": "thread.compaction",
        "compacted": False,
        "summary_id": None,
        "text": None,
        "through_run_id": None,
        "billing": None,
    }
