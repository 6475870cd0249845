"""The client's agent versions and aliases and `atrium agents versions|diff|restore|alias …`
against a real server (offline model)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from atrium.client import AsyncClient, Client
from atrium.client.errors import InvalidParameterError
from tests.client.conftest import Server


def test_client_versions_and_aliases(atrium: Client) -> None:
    agent = atrium.agents.create("Versioned", config={"instructions": "one"})
    atrium.agents.update(agent.agent_id, config={"instructions": "two"})
    page = atrium.agents.versions(agent.agent_id)
    assert [v.version for v in page.data] == [2, 1]
    assert page.data[0].live and not page.data[1].live
    assert [v.version for v in atrium.agents.iter_versions(agent.agent_id, limit=1)] == [2, 1]
    diff = atrium.agents.diff(agent.agent_id, 2, against=1)
    assert [(op.op, op.path, op.before, op.value) for op in diff.patch] == [
        ("replace", "/instructions", "one", "two")
    ]
    restored = atrium.agents.restore(agent.agent_id, 1)
    assert (restored.version, restored.restored_from) == (3, 1)
    assert restored.config == atrium.agents.version(agent.agent_id, 1).config

    alias = atrium.agents.set_alias(agent.agent_id, "prod", 1, split_version=2, split_weight=0.5)
    assert alias.split is not None and alias.split.weight == 0.5
    assert [a.name for a in atrium.agents.aliases(agent.agent_id)] == ["prod"]
    run = atrium.runs.create("hello", agent_id=f"{agent.agent_id}@prod")
    assert run.agent_version in (1, 2)
    with pytest.raises(InvalidParameterError) as bad:
        atrium.agents.set_alias(agent.agent_id, "prod", 1, split_version=2, split_weight=2.0)
    assert bad.value.parameter == "split.weight"
    assert atrium.agents.delete_alias(agent.agent_id, "prod").deleted
    with pytest.raises(InvalidParameterError) as gone:
        atrium.runs.create("hello", agent_id=f"{agent.agent_id}@prod")
    assert gone.value.parameter == "agent_id"
    usage = atrium.analytics.usage(agent_id=agent.agent_id)
    assert usage.versions is not None


async def test_async_client_versions(async_atrium: AsyncClient) -> None:
    agent = await async_atrium.agents.create("Versioned")
    version = await async_atrium.agents.version(agent.agent_id, 1)
    assert version.live and version.version == 1
    run = await async_atrium.runs.create("hello", agent_id=f"{agent.agent_id}@1")
    assert run.agent_version == 1


def test_cli_versions_and_aliases(server: Server, api_key: str) -> None:
    user = replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})
    created = user.cli("agents", "create", "Writer", "--instructions", "Be brief.", "--json")
    assert created.returncode == 0, created.stderr
    agent_id = json.loads(created.stdout)["agent_id"]
    edited = user.cli("agents", "update", agent_id, "--instructions", "Be thorough.")
    assert edited.returncode == 0, edited.stderr

    listed = user.cli("agents", "versions", agent_id)
    assert listed.returncode == 0, listed.stderr
    assert "live" in listed.stdout and "Be thorough." in listed.stdout

    diff = user.cli("agents", "diff", agent_id, "2")
    assert diff.returncode == 0, diff.stderr
    assert '~ /instructions: "Be brief." → "Be thorough."' in diff.stdout

    restored = user.cli("agents", "restore", agent_id, "1")
    assert restored.returncode == 0, restored.stderr
    assert "Version 1 restored as version 3, now live." in restored.stdout
    shown = user.cli("agents", "get", agent_id)
    assert shown.returncode == 0, shown.stderr
    assert ["version", "3"] in [line.split() for line in shown.stdout.splitlines()]

    aliased = user.cli(
        "agents", "alias", "set", agent_id, "canary", "--version", "3",
        "--split-version", "2", "--split-weight", "0.1",
    )  # fmt: skip
    assert aliased.returncode == 0, aliased.stderr
    assert "10% to version 2" in aliased.stdout
    bad = user.cli("agents", "alias", "set", agent_id, "canary", "--version", "9")
    assert bad.returncode == 1
    assert "parameter: --version" in bad.stderr
    aliases = user.cli("agents", "alias", "list", agent_id, "--json")
    assert [a["name"] for a in json.loads(aliases.stdout)["data"]] == ["canary"]
    deleted = user.cli("agents", "alias", "delete", agent_id, "canary")
    assert deleted.returncode == 0 and "deleted" in deleted.stdout


def test_cli_usage_of_an_agent_shows_its_versions(
    server: Server, api_key: str, atrium: Client
) -> None:
    user = replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})
    agent = atrium.agents.create("Counted", config={"instructions": "one"})
    atrium.agents.update(agent.agent_id, config={"instructions": "two"})
    finished = [
        atrium.runs.wait(atrium.runs.create("count me", agent_id=ref).run_id, timeout=30)
        for ref in (f"{agent.agent_id}@1", f"{agent.agent_id}@2", f"{agent.agent_id}@2")
    ]
    assert [run.status for run in finished] == ["completed"] * 3

    shown = user.cli("usage", "--agent", agent.agent_id)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("By version"))
    rows = [line.split() for line in lines[start:] if line.strip()[:1].isdigit()]
    # version, runs, done: newest version first, each with the runs that executed it.
    assert [row[:3] for row in rows] == [["2", "2", "2"], ["1", "1", "1"]]

    every_agent = user.cli("usage")
    assert every_agent.returncode == 0, every_agent.stderr
    assert "By version" not in every_agent.stdout
