"""What the client commands print, as a newcomer following the guides sees it, through typer's
CliRunner against a real `atrium serve`: `--json` is the body the server sent, tables keep
within COLUMNS, errors name the option typed rather than the API's parameter."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner, Result

from atrium.cli import app
from atrium.client import Client, ConfigurationError, WebhookDelivery
from tests.client.conftest import Server

Atrium = Callable[..., Result]
# Nothing listens on port 9: every delivery there fails with a connection error.
DEAD_ENDPOINT = "http://127.0.0.1:9/hooks/atrium/a-rather-long-path-to-an-endpoint-that-is-down"


def command(server: Server, api_key: str, columns: int) -> Atrium:
    runner = CliRunner()
    env = {"ATRIUM_URL": server.url, "ATRIUM_API_KEY": api_key, "COLUMNS": str(columns)}

    def invoke(*args: str) -> Result:
        return runner.invoke(app, list(args), env=env)

    return invoke


@pytest.fixture
def cli(server: Server, api_key: str) -> Atrium:
    return command(server, api_key, 200)


@pytest.fixture
def narrow(server: Server, api_key: str) -> Atrium:
    """The commands on a 100-column output that is not a terminal."""
    return command(server, api_key, 100)


def printed(result: Result) -> str:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


def failed_delivery(atrium: Client, run_id: str) -> WebhookDelivery:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for delivery in atrium.webhooks.deliveries(run_id=run_id):
            if delivery.error:
                return delivery
        time.sleep(0.2)
    raise AssertionError(f"no failed delivery of {run_id}")


# --- --json ---------------------------------------------------------------------------------------
def test_json_is_the_body_the_server_sent(
    cli: Atrium, atrium: Client, server: Server, api_key: str
) -> None:
    run = atrium.runs.wait(atrium.runs.create("Write it down").run_id, timeout=30)
    hook = atrium.webhooks.create(DEAD_ENDPOINT, events=["run.failed"])
    agent = atrium.agents.create("writer", config={"temperature": 0.3})

    def raw(path: str) -> Any:
        auth = {"Authorization": f"Bearer {api_key}"}
        response = httpx.get(f"{server.url}{path}", headers=auth, timeout=10)
        response.raise_for_status()
        return response.json()

    shown = json.loads(printed(cli("runs", "get", run.run_id, "--json")))
    assert shown == raw(f"/api/v1/public/agent/runs/{run.run_id}")
    assert "error" not in shown and "webhook_secret" not in shown, "the server leaves them out"
    shown = json.loads(printed(cli("webhooks", "get", hook.webhook_id, "--json")))
    assert shown == raw(f"/v1/webhooks/{hook.webhook_id}")
    assert "secret" not in shown
    shown = json.loads(printed(cli("webhooks", "list", "--json")))
    assert shown == raw("/v1/webhooks")
    shown = json.loads(printed(cli("agents", "get", agent.agent_id, "--json")))
    assert shown == raw(f"/v1/agents/{agent.agent_id}")


# --- tables ---------------------------------------------------------------------------------------
def test_tables_keep_within_columns_and_ids_whole(
    narrow: Atrium, cli: Atrium, atrium: Client
) -> None:
    atrium.webhooks.create(DEAD_ENDPOINT, events=["run.completed"])
    prompt = "Summarise the quarterly report for the board, section by section, " * 3
    run = atrium.runs.wait(atrium.runs.create(prompt).run_id, timeout=30)
    delivery = failed_delivery(atrium, run.run_id)

    runs, deliveries = narrow("runs", "list"), narrow("webhooks", "deliveries")
    hooks = narrow("webhooks", "list")
    for result in (runs, deliveries, hooks):
        widest = max(len(line) for line in printed(result).splitlines())
        assert widest <= 100, result.stdout

    assert run.run_id in runs.stdout and "completed" in runs.stdout
    assert "Summarise the" in runs.stdout and "…" in runs.stdout, "the prompt is cut"
    assert "Not shown at 100 columns: agent" in runs.stderr
    assert delivery.delivery_id in deliveries.stdout and "ConnectError" in deliveries.stdout
    # The error wraps between words, in a few lines, not one of a few characters each.
    error_lines = [line for line in deliveries.stdout.splitlines() if line.strip()][2:]
    assert 1 < len(error_lines) <= 3, deliveries.stdout

    wide = cli("runs", "list")
    assert run.agent_id in printed(wide) and prompt[:48] not in wide.stdout
    assert "Not shown" not in wide.stderr


def test_ids_stay_whole_where_they_alone_are_wider(
    server: Server, api_key: str, atrium: Client
) -> None:
    run = atrium.runs.wait(atrium.runs.create("Short").run_id, timeout=30)
    tiny = command(server, api_key, 40)("runs", "list")
    assert run.run_id in printed(tiny), "wider than COLUMNS rather than cut"


# --- errors ---------------------------------------------------------------------------------------
def test_no_key_names_the_option_on_the_command_line(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"ATRIUM_URL": server.url, "ATRIUM_API_KEY": None}
    missing = CliRunner().invoke(app, ["runs", "list"], env=env)
    assert missing.exit_code == 2
    assert "no API key: pass --api-key or set ATRIUM_API_KEY" in missing.stderr
    assert "api_key=" not in missing.stderr

    monkeypatch.delenv("ATRIUM_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="pass api_key= or set ATRIUM_API_KEY"):
        Client(base_url=server.url)


def test_a_400_names_the_option_that_gave_the_value(cli: Atrium, tmp_path: Path) -> None:
    created = cli("agents", "create", "hot", "--temperature", "5")
    assert created.exit_code == 1
    assert "config.temperature must be at most 2" in created.stderr
    assert "(parameter: --temperature)" in created.stderr

    agent_id = json.loads(printed(cli("agents", "create", "writer", "--json")))["agent_id"]
    updated = cli("agents", "update", agent_id, "--max-output-tokens", "0")
    assert updated.exit_code == 1 and "(parameter: --max-output-tokens)" in updated.stderr
    typo = cli("agents", "update", agent_id, "--model", "opnai:gpt-4o")
    assert typo.exit_code == 1 and "(parameter: --model)" in typo.stderr
    # A key of --config-file is named as the file holds it.
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"temperature": 5}))
    from_file = cli("agents", "update", agent_id, "--config-file", str(config))
    assert from_file.exit_code == 1
    assert "(parameter: temperature in --config-file)" in from_file.stderr
    # The option beats the file, and is named.
    both = cli("agents", "update", agent_id, "--config-file", str(config), "--temperature", "9")
    assert both.exit_code == 1 and "(parameter: --temperature)" in both.stderr

    run = cli("run", "Hello", "--model", "opnai:gpt-4o")
    assert run.exit_code == 1 and "(parameter: --model)" in run.stderr
