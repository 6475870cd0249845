"""JSON Schemas nested past `kit.json_depth`'s bound (an agent's or a run's
`config.output_schema`, a function tool's `parameters`) are a 400 naming the parameter, on
create and on update; the schema checks that recurse never see them."""

from __future__ import annotations

import httpx

from atrium.kit.json_depth import MAX_JSON_DEPTH
from tests.agents.test_validation import assert_invalid
from tests.deep_json import nested_schema
from tests.runs.helpers import RUNS

AGENTS = "/v1/agents"
JSON = {"Content-Type": "application/json"}


def _function(parameters: str) -> str:
    return '{"type":"function","name":"deep","parameters":' + parameters + "}"


async def test_schemas_nested_too_deep_are_a_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    kept = await client.post(AGENTS, json={"name": "kept"}, headers=auth)
    assert kept.status_code == 201, kept.text
    url = f"{AGENTS}/{kept.json()['agent_id']}"
    for depth in (MAX_JSON_DEPTH + 1, 201, 500):
        schema = nested_schema(depth)
        for config, parameter in (
            ('{"output_schema":' + schema + "}", "config.output_schema"),
            ('{"tools":[' + _function(schema) + "]}", "config.tools"),
        ):
            body = '{"name":"deep","config":' + config + "}"
            for response in (
                await client.post(AGENTS, content=body, headers={**auth, **JSON}),
                await client.put(url, content=body, headers={**auth, **JSON}),
            ):
                assert_invalid(response, parameter)
                assert f"more than {MAX_JSON_DEPTH} levels deep" in response.text
    assert (await client.get(url, headers=auth)).json() == kept.json()
    schema = nested_schema(MAX_JSON_DEPTH)
    body = (
        '{"name":"deep","config":{"output_schema":'
        + schema
        + ',"tools":['
        + _function(schema)
        + "]}}"
    )
    created = await client.post(AGENTS, content=body, headers={**auth, **JSON})
    assert created.status_code == 201, created.text


async def test_a_per_run_output_schema_nested_too_deep_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for depth in (MAX_JSON_DEPTH + 1, 201, 500):
        body = '{"prompt":"hi","config":{"output_schema":' + nested_schema(depth) + "}}"
        response = await client.post(RUNS, content=body, headers={**auth, **JSON})
        assert_invalid(response, "config.output_schema")
        assert f"more than {MAX_JSON_DEPTH} levels deep" in response.text
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []
    body = '{"prompt":"hi","config":{"output_schema":' + nested_schema(MAX_JSON_DEPTH) + "}}"
    created = await client.post(RUNS, content=body, headers={**auth, **JSON})
    assert created.status_code == 201, created.text
