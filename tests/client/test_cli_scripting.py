"""The client commands for scripts, through typer's CliRunner against a real `atrium serve`:
`--json` everywhere, `run --no-follow` prints only the id, `runs list` pages with a cursor,
`runs cancel` says what it did, agents get/update/delete, webhooks, plain help pages."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner, Result

from atrium.cli import app
from atrium.client import Client, ConfigurationError, MessageDelta
from atrium.webhooks.schemas import EVENTS
from tests.client.conftest import SLOW_MODEL, Server

Atrium = Callable[..., Result]


@pytest.fixture
def cli(server: Server, api_key: str) -> Atrium:
    """`cli("runs", "list")`: the command run in this process as a user whose ATRIUM_API_KEY
    is a fresh account's key."""
    runner = CliRunner()
    env = {"ATRIUM_URL": server.url, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"}

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(app, list(args), env=env, input=input)

    return invoke


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def test_run_no_follow_prints_only_the_id(cli: Atrium, atrium: Client) -> None:
    started = cli("run", "Later", "--no-follow")
    assert started.exit_code == 0, started.stderr
    assert re.fullmatch(r"run_[A-Za-z0-9_-]+\n", started.stdout), started.stdout
    run_id = started.stdout.strip()
    assert f"atrium runs follow {run_id}" in started.stderr
    assert atrium.runs.wait(run_id, timeout=30).prompt == "Later"

    created = as_json(cli("run", "Later again", "--no-follow", "--json"))
    assert created["run_id"].startswith("run_") and created["prompt"] == "Later again"


def test_run_json_waits_and_prints_the_finished_run(cli: Atrium) -> None:
    finished = as_json(cli("run", "Count to three", "--json"))
    assert finished["status"] == "completed"
    assert finished["prompt"] == "Count to three" and finished["model"] == "atrium:offline"
    assert "Count to three" in finished["result"]
    assert finished["artifacts"][0]["name"] == "answer.md"


def test_run_model_applies_to_that_run_and_is_checked(
    cli: Atrium, atrium: Client, slow_agent: str
) -> None:
    finished = as_json(
        cli("run", "Quick one", "--agent", slow_agent, "--model", "atrium:offline", "--json")
    )
    assert finished["model"] == "atrium:offline" and finished["status"] == "completed"
    assert atrium.agents.get(slow_agent).config.model == SLOW_MODEL, "the agent is unchanged"

    typo = cli("run", "Hello", "--model", "opnai:gpt-4o")
    assert typo.exit_code == 1
    assert "config.model: unknown provider 'opnai' (did you mean openai?" in typo.stderr
    assert "(parameter: --model)" in typo.stderr
    missing_key = cli("run", "Hello", "--model", "openai:gpt-4o-mini")
    assert missing_key.exit_code == 1
    assert "openai models need ATRIUM_OPENAI_API_KEY" in missing_key.stderr
    assert atrium.runs.list(limit=100).data[0].prompt == "Quick one", "no run was made"


def test_runs_list_pages_with_a_cursor_and_shows_prompt_and_agent(
    cli: Atrium, atrium: Client
) -> None:
    empty = cli("runs", "list")
    assert empty.exit_code == 0 and "No runs yet" in empty.stdout
    made = [atrium.runs.create(f"task number {n}").run_id for n in range(5)]
    for run_id in made:
        atrium.runs.wait(run_id, timeout=30)

    first = cli("runs", "list", "--limit", "2")
    assert first.exit_code == 0, first.stderr
    assert made[4] in first.stdout and made[3] in first.stdout and made[2] not in first.stdout
    assert "task number 4" in first.stdout, "the prompt column"
    assert atrium.runs.get(made[4]).agent_id in first.stdout, "the agent column"
    cursor = re.search(r"--cursor (\S+)", first.stderr)
    assert cursor is not None and "--limit 2" in first.stderr
    second = cli("runs", "list", "--limit", "2", "--cursor", cursor.group(1))
    assert made[2] in second.stdout and made[1] in second.stdout
    assert made[4] not in second.stdout

    page = as_json(cli("runs", "list", "--limit", "2", "--json"))
    assert [run["run_id"] for run in page["data"]] == made[:2:-1][:2]
    assert page["has_more"] is True and page["next_cursor"]
    everything = as_json(cli("runs", "list", "--limit", "2", "--all", "--json"))
    assert [run["run_id"] for run in everything["data"]] == made[::-1]
    assert everything["has_more"] is False

    none = cli("runs", "list", "--status", "failed")
    assert none.exit_code == 0
    assert "No runs match" in none.stdout and "No runs yet" not in none.stdout


def test_runs_get_shows_the_prompt_and_the_model(cli: Atrium, atrium: Client) -> None:
    run = atrium.runs.wait(atrium.runs.create("Describe the sea\nin two lines").run_id, timeout=30)
    shown = cli("runs", "get", run.run_id)
    assert shown.exit_code == 0, shown.stderr
    assert "Prompt: Describe the sea\nin two lines" in shown.stdout
    assert "Model: atrium:offline" in shown.stdout
    assert run.result and run.result in shown.stdout
    assert as_json(cli("runs", "get", run.run_id, "--json"))["model"] == "atrium:offline"


def test_runs_cancel_says_it_asked_then_the_final_status(
    cli: Atrium, atrium: Client, slow_agent: str
) -> None:
    created = atrium.runs.create("Never mind", agent_id=slow_agent)
    for event in atrium.runs.stream(created.run_id):
        if isinstance(event, MessageDelta):
            break  # running: the cancel has to wait for the next step
    cancelled = cli("runs", "cancel", created.run_id)
    assert cancelled.exit_code == 0, cancelled.stderr
    lines = cancelled.stdout.splitlines()
    assert lines == [f"{created.run_id}  cancel requested", f"{created.run_id}  cancelled"]
    assert atrium.runs.get(created.run_id).status == "cancelled"

    again = cli("runs", "cancel", created.run_id)
    assert again.exit_code == 1 and "409 CONFLICT" in again.stderr

    queued = atrium.runs.create("Also never", agent_id=slow_agent)
    final = as_json(cli("runs", "cancel", queued.run_id, "--json"))
    assert final["run_id"] == queued.run_id and final["status"] == "cancelled"


def test_agents_get_update_delete(cli: Atrium, tmp_path: Path) -> None:
    assert "No agents yet." in cli("agents", "list").stdout
    created = as_json(cli("agents", "create", "writer", "--temperature", "0.3", "--json"))
    agent_id = created["agent_id"]
    shown = cli("agents", "get", agent_id)
    assert shown.exit_code == 0 and "writer" in shown.stdout and "atrium:offline" in shown.stdout

    schema = {"type": "object", "properties": {"title": {"type": "string"}}}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "tools.json").write_text(json.dumps(["read_artifact"]))
    (tmp_path / "config.json").write_text(
        json.dumps({"instructions": "Be brief.", "temperature": 1})
    )
    updated = as_json(
        cli(
            "agents", "update", agent_id,
            "--name", "editor",
            "--model", SLOW_MODEL,
            "--config-file", str(tmp_path / "config.json"),
            "--tools-file", str(tmp_path / "tools.json"),
            "--output-schema-file", str(tmp_path / "schema.json"),
            "--temperature", "0.5",
            "--json",
        )
    )  # fmt: skip
    assert updated["name"] == "editor"
    assert updated["config"] == {
        "model": SLOW_MODEL,
        "temperature": 0.5,  # the option beats the file
        "instructions": "Be brief.",
        "max_output_tokens": None,
        "tools": ["read_artifact"],
        "output_schema": schema,
        "context_budget": None,
        "memory": None,
        "blocks": [],
    }
    # The schema from stdin.
    piped = cli("agents", "update", agent_id, "--output-schema-file", "-", "--json", input="{}")
    assert piped.exit_code == 1 and "(parameter: --output-schema-file)" in piped.stderr

    typo = cli("agents", "update", agent_id, "--model", "opnai:gpt-4o")
    assert typo.exit_code == 1
    assert "config.model: unknown provider 'opnai'" in typo.stderr
    assert as_json(cli("agents", "get", agent_id, "--json"))["config"]["model"] == SLOW_MODEL

    nothing = cli("agents", "update", agent_id)
    assert nothing.exit_code == 2 and "at least one field" in nothing.stderr
    not_json = tmp_path / "bad.json"
    not_json.write_text("{nope")
    bad = cli("agents", "update", agent_id, "--config-file", str(not_json))
    assert bad.exit_code == 2 and "is not JSON" in bad.stderr

    deleted = cli("agents", "delete", agent_id)
    assert deleted.exit_code == 0 and f"Agent {agent_id} deleted." in deleted.stdout
    gone = cli("agents", "get", agent_id)
    assert gone.exit_code == 1 and "404 NOT_FOUND" in gone.stderr
    listed = as_json(cli("agents", "list", "--json"))
    assert agent_id not in {agent["agent_id"] for agent in listed["data"]}


def test_webhook_commands(cli: Atrium, atrium: Client, server: Server) -> None:
    # The server may send to loopback (ATRIUM_ALLOW_PRIVATE_TARGETS); nothing listens on port 9.
    target = "http://127.0.0.1:9/hook"
    made = cli("webhooks", "create", target, "--event", "run.failed")
    assert made.exit_code == 0, made.stderr
    secret = re.search(r"whsec_\S+", made.stdout)
    assert secret is not None and "run.failed" in made.stdout
    webhook_id = re.search(r"wh_[A-Za-z0-9_-]+", made.stdout)
    assert webhook_id is not None
    created = as_json(cli("webhooks", "create", target, "--json"))
    assert created["secret"].startswith("whsec_") and created["events"] == [
        "run.completed",
        "run.failed",
        "run.cancelled",
    ]

    listed = as_json(cli("webhooks", "list", "--json"))
    assert [hook["webhook_id"] for hook in listed["data"]] == [
        webhook_id.group(0),
        created["webhook_id"],
    ]
    assert all("secret" not in hook for hook in listed["data"]), "never shown again"
    shown = cli("webhooks", "get", created["webhook_id"])
    assert shown.exit_code == 0 and target in shown.stdout and "whsec_" not in shown.stdout

    assert "No deliveries yet." in cli("webhooks", "deliveries").stdout
    run = atrium.runs.wait(atrium.runs.create("Tell the hook").run_id, timeout=30)
    deliveries = as_json(cli("webhooks", "deliveries", "--run", run.run_id, "--json"))
    assert [(d["webhook_id"], d["event"]) for d in deliveries["data"]] == [
        (created["webhook_id"], "run.completed")
    ]
    table = cli("webhooks", "deliveries", created["webhook_id"])
    assert run.run_id in table.stdout and "run.completed" in table.stdout

    gone = cli("webhooks", "delete", created["webhook_id"])
    assert gone.exit_code == 0 and f"Webhook {created['webhook_id']} deleted." in gone.stdout
    missing = cli("webhooks", "get", created["webhook_id"])
    assert missing.exit_code == 1 and "404 NOT_FOUND" in missing.stderr
    refused = cli("webhooks", "create", "ftp://example.invalid/x")
    assert refused.exit_code == 1 and "(parameter: url)" in refused.stderr


def test_the_other_commands_print_json(cli: Atrium, atrium: Client) -> None:
    run = atrium.runs.wait(atrium.runs.create("Something").run_id, timeout=30)
    artifacts = as_json(cli("artifacts", "list", run.run_id, "--json"))
    assert [a["name"] for a in artifacts["data"]] == ["answer.md"]
    report = as_json(cli("usage", "--json"))
    assert report["totals"]["runs"] == 1 and len(report["daily"]) == 30
    agents = as_json(cli("agents", "list", "--json"))
    assert [agent["name"] for agent in agents["data"]] == ["Default agent"]


def _commands() -> Iterator[tuple[tuple[str, ...], bool]]:
    """Every command and group of `atrium` by path, and whether it is a group."""

    def walk(path: tuple[str, ...], command: Any) -> Iterator[tuple[tuple[str, ...], bool]]:
        children = getattr(command, "commands", None) or {}
        yield path, bool(children)
        for name, child in children.items():
            yield from walk((*path, name), child)

    yield from walk((), get_command(app))


COMMANDS = dict(_commands())
# They print what a person reads once: a server's log, "Database is up to date".
WITHOUT_JSON = {("serve",), ("worker",), ("migrate",)}


@pytest.mark.parametrize("path", list(COMMANDS), ids=lambda path: " ".join(path) or "atrium")
def test_help_pages_are_plain_and_every_command_takes_json(path: tuple[str, ...]) -> None:
    shown = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    for odd in ("<bool>", "<str>", "<int", "<float", "<Path>", "<datetime>", "{"):
        assert odd not in shown.stdout, (odd, shown.stdout)
    if not COMMANDS[path] and path not in WITHOUT_JSON:
        assert "--json" in shown.stdout, f"atrium {' '.join(path)} has no --json"


def test_webhooks_create_help_names_every_event() -> None:
    shown = CliRunner().invoke(app, ["webhooks", "create", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    for event in EVENTS:
        assert event in shown.stdout, (event, shown.stdout)


def test_a_key_pasted_with_its_heading_is_named_not_sent(server: Server, api_key: str) -> None:
    """`atrium keys create` output pasted whole (heading and key) into ATRIUM_API_KEY: the
    command says what is wrong with the key, not that the server cannot be reached."""
    pasted = f"Key 1 for account 'acme' (premium):\n{api_key}"
    env = {"ATRIUM_URL": server.url, "ATRIUM_API_KEY": pasted}
    result = CliRunner().invoke(app, ["runs", "list"], env=env)
    assert result.exit_code == 2
    assert "the API key holds spaces or line breaks" in result.stderr
    assert "cannot reach the server" not in result.stderr
    with pytest.raises(ConfigurationError, match="ATRIUM_API_KEY to the key alone"):
        Client(base_url=server.url, api_key=pasted)
