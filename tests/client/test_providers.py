"""`client.providers` (sync and async) and `atrium providers …` against a real server: a named
provider made through the client serves a run, its secrets are never shown back."""

from __future__ import annotations

import json
import subprocess

import pytest

from atrium.client import AsyncClient, Client, InvalidParameterError, NotFoundError
from tests.client.conftest import SLOW_WORDS, Server
from tests.processes import ATRIUM


def test_providers_sync(atrium: Client, slow_llm: str) -> None:
    created = atrium.providers.create(
        "bench", slow_llm, api_key="sk-bench", headers={"X-Tenant": "acme"}
    )
    assert created.provider_id.startswith("prv_") and created.base_url == slow_llm
    assert (created.api_key, created.headers) == ("***", {"X-Tenant": "***"})
    listed = atrium.providers.list()
    assert [item.name for item in listed.data] == ["bench"] and listed.server_providers == []
    assert atrium.providers.get(created.provider_id) == atrium.providers.get("bench")

    agent = atrium.agents.create(
        "named", config={"model": "openai-compatible:bench/slow", "tools": []}
    )
    done = atrium.runs.wait(atrium.runs.create("Hello", agent_id=agent.agent_id).run_id, timeout=60)
    assert done.status == "completed", done
    assert done.result == " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))

    updated = atrium.providers.update("bench", name="local", remove_api_key=True)
    assert (updated.name, updated.api_key, updated.headers) == ("local", None, {"X-Tenant": "***"})
    with pytest.raises(InvalidParameterError) as refused:
        atrium.providers.update("local", base_url="https://elsewhere.example.test/v1")
    assert refused.value.parameter == "headers"
    deleted = atrium.providers.delete("local")
    assert (deleted.provider_id, deleted.deleted) == (created.provider_id, True)
    with pytest.raises(NotFoundError):
        atrium.providers.get("local")


async def test_providers_async(async_atrium: AsyncClient) -> None:
    created = await async_atrium.providers.create("vllm", "https://vllm.example.test/v1")
    assert created.api_key is None
    moved = await async_atrium.providers.update(
        created.provider_id, base_url="https://vllm.example.net/v1", api_key="sk-new"
    )
    assert (moved.base_url, moved.api_key) == ("https://vllm.example.net/v1", "***")
    assert [item.name for item in (await async_atrium.providers.list()).data] == ["vllm"]
    assert (await async_atrium.providers.delete("vllm")).deleted is True
    assert (await async_atrium.providers.list()).data == []


def test_providers_cli(user: Server, slow_llm: str) -> None:
    created = user.cli(
        "providers", "create", "bench", slow_llm, "--provider-key", "sk-cli-secret",
        "--header", "X-Tenant=acme",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    assert "bench" in created.stdout and "sk-cli-secret" not in created.stdout
    listed = user.cli("providers", "list")
    assert listed.returncode == 0 and "bench" in listed.stdout and "X-Tenant" in listed.stdout
    as_json = json.loads(user.cli("providers", "list", "--json").stdout)
    assert as_json["data"][0]["api_key"] == "***" and as_json["server_providers"] == []

    ran = user.cli("run", "Hello", "--model", "openai-compatible:bench/slow")
    assert ran.returncode == 0, ran.stderr
    assert f"word{SLOW_WORDS}" in ran.stdout

    moved = user.cli("providers", "update", "bench", "--base-url", "https://llm.example.test/v1")
    assert moved.returncode == 1 and "(parameter: --provider-key / --no-key)" in moved.stderr
    updated = user.cli("providers", "update", "bench", "--no-key", "--json")
    assert updated.returncode == 0 and json.loads(updated.stdout)["api_key"] is None
    bad = user.cli("providers", "create", "Bad Name", slow_llm)
    assert bad.returncode == 1 and "INVALID_PARAMETER" in bad.stderr and "name" in bad.stderr
    malformed = user.cli("providers", "create", "x", slow_llm, "--header", "no-equals")
    assert malformed.returncode == 2

    deleted = user.cli("providers", "delete", "bench")
    assert deleted.returncode == 0 and "Provider bench deleted." in deleted.stdout
    missing = user.cli("providers", "delete", "bench")
    assert missing.returncode == 1 and "NOT_FOUND" in missing.stderr


def test_help_lists_the_providers_command() -> None:
    shown = subprocess.run([ATRIUM, "--help"], capture_output=True, text=True, timeout=60)
    assert " providers " in shown.stdout
