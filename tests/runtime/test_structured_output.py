"""`config.output_schema`: the run's `result` is a JSON object valid against it, or the run fails
with OUTPUT_INVALID."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest
from pydantic_ai.models.test import TestModel

from atrium.runtime.llm_models import ModelRegistry
from atrium.runtime.offline import offline_instance
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished

REPORT = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "score": {"type": "integer", "minimum": 0},
        "verdict": {"enum": ["accept", "reject"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "final": {"type": "boolean"},
        "author": {"$ref": "#/$defs/person"},
        "note": {"type": "string"},
    },
    "required": ["title", "score", "verdict", "tags", "final", "author"],
    "$defs": {
        "person": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "ratio": {"type": "number"}},
            "required": ["name", "ratio"],
        }
    },
}
MINIMAL_REPORT = {
    "title": "",
    "score": 0,
    "verdict": "accept",
    "tags": [],
    "final": False,
    "author": {"name": "", "ratio": 0},
}


async def _run(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, prompt: str
) -> dict[str, Any]:
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    return await wait_finished(client, auth, run["run_id"])


def test_the_offline_instance_holds_the_required_properties_only() -> None:
    assert offline_instance(REPORT) == MINIMAL_REPORT
    jsonschema.validate(MINIMAL_REPORT, REPORT)


async def test_the_offline_model_answers_with_a_minimal_instance(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=["write_artifact"], output_schema=REPORT)
    done = await _run(client, auth, agent_id, "Review the paper.")
    assert done["status"] == "completed", done
    assert done["result"] == MINIMAL_REPORT
    assert [a["name"] for a in done["artifacts"]] == ["answer.md"]  # tools still ran first
    events = (
        await client.get(
            f"{RUNS}/{done['run_id']}/events", headers={**auth, "Accept": "application/json"}
        )
    ).json()["data"]
    assert events[-1]["event"] == "run.completed"
    assert events[-1]["data"]["result"] == MINIMAL_REPORT
    listed = (await client.get(RUNS, headers=auth)).json()["data"]
    assert listed[0]["result"] == MINIMAL_REPORT


async def test_an_output_line_is_the_answer(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[], output_schema=REPORT)
    wanted = {**MINIMAL_REPORT, "title": "Queues", "score": 9, "tags": ["db"], "note": "ok"}
    done = await _run(client, auth, agent_id, f"Review it.\noutput {json.dumps(wanted)}")
    assert done["status"] == "completed", done
    assert done["result"] == wanted


async def test_an_answer_that_misses_the_schema_fails_with_output_invalid(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[], output_schema=REPORT)
    done = await _run(client, auth, agent_id, 'output {"title": "no score"}')
    assert done["status"] == "failed"
    assert done["error"]["code"] == "OUTPUT_INVALID"
    assert '"score" is a required property' in done["error"]["message"]
    assert "result" not in done


async def test_an_impossible_schema_fails_clearly(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    # Valid JSON Schema, but no string is at least 5 and at most 2 characters long.
    impossible = {
        "type": "object",
        "properties": {"code": {"type": "string", "minLength": 5, "maxLength": 2}},
        "required": ["code"],
    }
    agent_id = await make_agent(tools=[], output_schema=impossible)
    done = await _run(client, auth, agent_id, "anything")
    assert done["status"] == "failed"
    assert done["error"] == {
        "code": "OUTPUT_INVALID",
        "message": "the model's answer does not match the output schema: "
        '"" is shorter than 5 characters (at /code)',
    }
    assert done["billing"]["requests"] == 2  # the answer, then one retry with the error


@pytest.mark.parametrize("tools", [[], ["list_artifacts"]])
async def test_test_model_answers_with_a_valid_object(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    tools: list[str],
) -> None:
    models.register("test:structured", TestModel())
    agent_id = await make_agent(model="test:structured", tools=tools, output_schema=REPORT)
    done = await _run(client, auth, agent_id, "x")
    assert done["status"] == "completed", done
    assert isinstance(done["result"], dict)
    jsonschema.validate(done["result"], REPORT)


async def test_without_a_schema_the_result_stays_text(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[])
    done = await _run(client, auth, agent_id, 'output {"a": 1}')
    assert done["status"] == "completed"
    assert isinstance(done["result"], str) and done["result"].startswith("Offline answer")
