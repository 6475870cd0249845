"""Per-run `config` on POST /agent/runs: it applies to that run only, the run body
shows the prompt and the effective model, and an unknown or invalid field is a 400 that
writes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.runs.helpers import RUNS, create_run, wait_finished

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["title", "score"],
}


async def _agent(client: httpx.AsyncClient, auth: dict[str, str], model: str) -> str:
    response = await client.post(
        "/v1/agents", json={"name": "configured", "config": {"model": model}}, headers=auth
    )
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def test_the_run_body_shows_its_prompt_and_model(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await create_run(client, auth, "Write a haiku about rain")
    assert created["prompt"] == "Write a haiku about rain"
    assert created["model"] == "atrium:offline"
    done = await wait_finished(client, auth, created["run_id"])
    assert (done["prompt"], done["model"]) == ("Write a haiku about rain", "atrium:offline")
    listed = (await client.get(RUNS, headers=auth)).json()["data"]
    assert [(run["prompt"], run["model"]) for run in listed] == [
        ("Write a haiku about rain", "atrium:offline")
    ]


# An address where nothing listens: the agent's model is configured but unreachable.
@pytest.mark.parametrize("settings_overrides", [{"llm_base_url": "http://127.0.0.1:9/v1"}])
async def test_a_runs_model_overrides_the_agents_for_that_run_only(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    # The agent's model has no server behind it here; the run's own model does.
    agent_id = await _agent(client, auth, "openai-compatible:nowhere")
    created = await create_run(
        client, auth, "hello", agent_id=agent_id, config={"model": "atrium:offline"}
    )
    assert created["model"] == "atrium:offline"
    done = await wait_finished(client, auth, created["run_id"])
    assert done["status"] == "completed", done
    agent = (await client.get(f"/v1/agents/{agent_id}", headers=auth)).json()
    assert agent["config"]["model"] == "openai-compatible:nowhere"

    plain = await create_run(client, auth, "hello", agent_id=agent_id)
    assert plain["model"] == "openai-compatible:nowhere"
    assert (await wait_finished(client, auth, plain["run_id"]))["status"] == "failed"


async def test_a_runs_output_schema_makes_a_json_result(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await create_run(
        client,
        auth,
        'Rate this\noutput {"title": "Rain", "score": 7}',
        config={"output_schema": SCHEMA, "temperature": 0.1},
    )
    done = await wait_finished(client, auth, created["run_id"])
    assert done["status"] == "completed", done
    assert done["result"] == {"title": "Rain", "score": 7}


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"prompt": "hi", "colour": "red"}, "colour"),
        ({"prompt": "hi", "model": "atrium:offline"}, "model"),
        ({"prompt": "hi", "config": {"temperature": 3}}, "config.temperature"),
        ({"prompt": "hi", "config": {"temperature": "0.5"}}, "config.temperature"),
        ({"prompt": "hi", "config": {"model": "gpt-4o"}}, "config.model"),
        ({"prompt": "hi", "config": {"tools": []}}, "config.tools"),
        ({"prompt": "hi", "config": {"output_schema": {"type": 5}}}, "config.output_schema"),
        ({"prompt": "hi", "config": []}, "config"),
    ],
)
async def test_an_unknown_or_invalid_field_is_a_400_that_writes_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any], parameter: str
) -> None:
    response = await client.post(RUNS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["parameter"] == parameter
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []
