"""An output schema never makes atrium fetch anything: a `$ref`, `$dynamicRef` or
`$recursiveRef` that does not resolve within the schema, or a regex the linear engine cannot
run, is a 400 on `config.output_schema` (agent create and update, per-run config)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.agents.test_validation import assert_invalid
from tests.runs.helpers import RUNS
from tests.schema_host import SchemaHost, schema_host

__all__ = ["schema_host"]  # the fixture


def _remote_schemas(base: str) -> list[dict[str, Any]]:
    def holding(node: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"type": "object", "properties": {"a": node}, **extra}

    return [
        holding({"$dynamicRef": f"{base}/dynamic.json"}),
        holding({"$ref": f"{base}/ref.json"}),
        {
            "$schema": "https://json-schema.org/draft/2019-09/schema",
            **holding({"$recursiveRef": f"{base}/recursive.json"}),
        },
        # Local-looking, but the `$id` beside it makes `#/$defs/x` mean another document.
        holding(
            {"$id": f"{base}/other.json", "$ref": "#/$defs/x"},
            **{"$defs": {"x": {"type": "string"}}},
        ),
    ]


async def test_a_schema_reference_outside_it_is_a_400_and_nothing_is_fetched(
    client: httpx.AsyncClient, auth: dict[str, str], schema_host: SchemaHost
) -> None:
    kept = (
        await client.post(
            "/v1/agents", json={"name": "kept", "config": {"tools": []}}, headers=auth
        )
    ).json()
    url = f"/v1/agents/{kept['agent_id']}"
    for schema in _remote_schemas(schema_host.base):
        body = {"name": "a", "config": {"output_schema": schema}}
        assert_invalid(
            await client.post("/v1/agents", json=body, headers=auth), "config.output_schema"
        )
        assert_invalid(await client.put(url, json=body, headers=auth), "config.output_schema")
        run = {"prompt": 'output {"a": "x"}', "config": {"output_schema": schema}}
        assert_invalid(await client.post(RUNS, json=run, headers=auth), "config.output_schema")
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []
    assert (await client.get(url, headers=auth)).json() == kept
    await asyncio.sleep(0.2)  # a fetch started by the requests would have arrived
    assert schema_host.hits == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?=a)a"}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(a)\\1"}}},
        {"type": "object", "patternProperties": {"(?<!b)a": {}}},
    ],
    ids=["lookahead", "backreference", "lookbehind-key"],
)
async def test_a_regex_the_linear_engine_cannot_run_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], schema: dict[str, Any]
) -> None:
    body = {"name": "a", "config": {"output_schema": schema}}
    created = await client.post("/v1/agents", json=body, headers=auth)
    assert_invalid(created, "config.output_schema")
    assert "regex" in created.json()["error"]["message"]
    run = {"prompt": "hi", "config": {"output_schema": schema}}
    assert_invalid(await client.post(RUNS, json=run, headers=auth), "config.output_schema")
