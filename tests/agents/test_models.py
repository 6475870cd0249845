"""A model whose provider is unknown or not configured is a 400 on `config.model` in atrium's
words, at agent create and update and for a run's own `config.model`; nothing is stored.
`ATRIUM_DEFAULT_MODEL` is the model of new agents, the default agent included."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.agents.conftest import PROVIDERS_CONFIGURED
from tests.runs.helpers import RUNS

KNOWN = "known: openai, anthropic, openai-compatible:<name>, atrium:offline"
NOTHING_CONFIGURED: dict[str, object] = {}


def refused(response: httpx.Response, parameter: str = "config.model") -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"] == {"parameter": parameter}
    message: str = error["message"]
    return message


async def _agents(client: httpx.AsyncClient, auth: dict[str, str]) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = (await client.get("/v1/agents", headers=auth)).json()["data"]
    return data


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (
            "opnai:gpt-4o",
            f"config.model: unknown provider 'opnai' (did you mean openai? {KNOWN})",
        ),
        ("groq:llama-3.1-8b", f"config.model: unknown provider 'groq' ({KNOWN})"),
        (
            "atrium:online",
            "config.model: unknown model 'atrium:online': atrium's built-in model is "
            "atrium:offline",
        ),
    ],
)
async def test_an_unknown_provider_is_named(
    client: httpx.AsyncClient, auth: dict[str, str], model: str, message: str
) -> None:
    response = await client.post(
        "/v1/agents", json={"name": "a", "config": {"model": model}}, headers=auth
    )
    assert refused(response) == message
    assert await _agents(client, auth) == []


@pytest.mark.parametrize("settings_overrides", [NOTHING_CONFIGURED])
@pytest.mark.parametrize(
    ("model", "setting"),
    [
        ("openai:gpt-4o-mini", "ATRIUM_OPENAI_API_KEY"),
        ("anthropic:claude-3-5-haiku-latest", "ATRIUM_ANTHROPIC_API_KEY"),
        ("openai-compatible:llama3.1:8b", "ATRIUM_LLM_BASE_URL"),
    ],
)
async def test_a_provider_without_its_settings_names_the_setting(
    client: httpx.AsyncClient, auth: dict[str, str], model: str, setting: str
) -> None:
    body = {"name": "a", "config": {"model": model}}
    message = refused(await client.post("/v1/agents", json=body, headers=auth))
    assert message.startswith(f"config.model: {model.split(':')[0]} models need {setting}")
    assert "OpenAIProvider" not in message and "api_key" not in message
    assert await _agents(client, auth) == []

    # The offline model needs nothing; changing an agent to the unconfigured model is refused
    # and leaves it as it was.
    created = await client.post("/v1/agents", json={"name": "offline"}, headers=auth)
    assert created.status_code == 201, created.text
    url = f"/v1/agents/{created.json()['agent_id']}"
    changed = await client.put(url, json={"config": {"model": model}}, headers=auth)
    assert refused(changed) == message
    assert (await client.get(url, headers=auth)).json() == created.json()


@pytest.mark.parametrize("settings_overrides", [NOTHING_CONFIGURED])
async def test_an_update_of_other_keys_does_not_recheck_a_stored_model(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """Only a model being set is checked: an agent's other keys stay editable."""
    created = await client.post("/v1/agents", json={"name": "a"}, headers=auth)
    url = f"/v1/agents/{created.json()['agent_id']}"
    changed = await client.put(url, json={"config": {"temperature": 0.1}}, headers=auth)
    assert changed.status_code == 200, changed.text
    assert changed.json()["config"]["temperature"] == 0.1


async def test_a_configured_provider_is_accepted_on_create_and_update(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await client.post(
        "/v1/agents", json={"name": "a", "config": {"model": "openai:gpt-4o-mini"}}, headers=auth
    )
    assert created.status_code == 201, created.text
    url = f"/v1/agents/{created.json()['agent_id']}"
    for model in ("anthropic:claude-3-5-haiku-latest", "openai-compatible:qwen2.5:7b"):
        changed = await client.put(url, json={"config": {"model": model}}, headers=auth)
        assert changed.status_code == 200, changed.text
        assert changed.json()["config"]["model"] == model


@pytest.mark.parametrize("settings_overrides", [NOTHING_CONFIGURED])
async def test_a_runs_own_model_is_checked_and_no_run_is_made(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for model, words in (
        ("opnai:gpt-4o", "unknown provider 'opnai'"),
        ("openai:gpt-4o-mini", "openai models need ATRIUM_OPENAI_API_KEY"),
    ):
        response = await client.post(
            RUNS, json={"prompt": "hi", "config": {"model": model}}, headers=auth
        )
        assert refused(response).startswith(f"config.model: {words}")
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []
    ok = await client.post(
        RUNS, json={"prompt": "hi", "config": {"model": "atrium:offline"}}, headers=auth
    )
    assert ok.status_code == 201, ok.text
    assert ok.json()["model"] == "atrium:offline"


@pytest.mark.parametrize(
    "settings_overrides",
    # No worker: the run stays queued, its model server (nothing listens) is never asked.
    [
        {
            **PROVIDERS_CONFIGURED,
            "default_model": "openai-compatible:llama3.1:8b",
            "run_worker": False,
        }
    ],
)
async def test_the_default_model_is_the_model_of_new_agents_and_the_default_agent(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await client.post("/v1/agents", json={"name": "a"}, headers=auth)
    assert created.status_code == 201, created.text
    assert created.json()["config"]["model"] == "openai-compatible:llama3.1:8b"
    # A run without an agent creates the account's default agent, on the default model.
    run = await client.post(RUNS, json={"prompt": "hi"}, headers=auth)
    assert run.status_code == 201, run.text
    assert run.json()["model"] == "openai-compatible:llama3.1:8b"
    models = {agent["name"]: agent["config"]["model"] for agent in await _agents(client, auth)}
    assert models == {
        "a": "openai-compatible:llama3.1:8b",
        "Default agent": "openai-compatible:llama3.1:8b",
    }


@pytest.mark.parametrize("settings_overrides", [{"default_model": "openai:gpt-4o-mini"}])
async def test_a_default_model_without_its_key_is_named_on_create(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post("/v1/agents", json={"name": "a"}, headers=auth)
    assert refused(response) == "config.model: openai models need ATRIUM_OPENAI_API_KEY"
