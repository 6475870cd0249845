"""Every invalid agent body is a 400 INVALID_PARAMETER naming the field, and writes nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

GOOD_CONFIG_VALUES: list[tuple[str, Any]] = [
    ("model", "anthropic:claude-3-5-haiku-latest"),
    ("model", "openai:gpt-4o-mini"),
    ("temperature", 0),
    ("temperature", 2),
    ("temperature", 1.25),
    ("instructions", "x" * 20_000),
    ("max_output_tokens", 1),
    ("max_output_tokens", 1_000_000),
    # JSON Schema (OpenAPI 3.1) counts 64.0 as an integer; it is stored as 64.
    ("max_output_tokens", 64.0),
    ("tools", []),
]

BAD_BODIES: list[tuple[Any, str]] = [
    ({}, "name"),
    ({"name": ""}, "name"),
    ({"name": "   "}, "name"),
    ({"name": "x" * 101}, "name"),
    ({"name": 5}, "name"),
    ({"name": None}, "name"),
    ({"name": ["a"]}, "name"),
    ({"name": "a", "description": 1}, "description"),
    ({"name": "a", "description": None}, "description"),
    ({"name": "a", "description": "d" * 2001}, "description"),
    ({"name": "a\u0000b"}, "name"),
    ({"name": "line\nbreak"}, "name"),
    ({"name": "a", "description": "nul \u0000"}, "description"),
    ({"name": "a", "config": {"instructions": "nul \u0000"}}, "config.instructions"),
    ({"name": "a", "color": 1}, "color"),
    ({"name": "a", "config": None}, "config"),
    ({"name": "a", "config": []}, "config"),
    ({"name": "a", "config": "openai:gpt-4o"}, "config"),
    ({"name": "a", "config": {"temperature": -0.1}}, "config.temperature"),
    ({"name": "a", "config": {"temperature": 2.01}}, "config.temperature"),
    ({"name": "a", "config": {"temperature": "0.5"}}, "config.temperature"),
    ({"name": "a", "config": {"temperature": True}}, "config.temperature"),
    ({"name": "a", "config": {"temperature": None}}, "config.temperature"),
    ({"name": "a", "config": {"model": ""}}, "config.model"),
    ({"name": "a", "config": {"model": "gpt-4o"}}, "config.model"),
    ({"name": "a", "config": {"model": "openai:"}}, "config.model"),
    ({"name": "a", "config": {"model": "open ai:gpt"}}, "config.model"),
    ({"name": "a", "config": {"model": 4}}, "config.model"),
    ({"name": "a", "config": {"model": "a:" + "b" * 300}}, "config.model"),
    ({"name": "a", "config": {"model": "opnai:gpt-4o"}}, "config.model"),
    ({"name": "a", "config": {"model": "atrium:online"}}, "config.model"),
    ({"name": "a", "config": {"instructions": 1}}, "config.instructions"),
    ({"name": "a", "config": {"instructions": "x" * 20_001}}, "config.instructions"),
    ({"name": "a", "config": {"max_output_tokens": 0}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"max_output_tokens": -5}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"max_output_tokens": 1.5}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"max_output_tokens": 10**24}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"max_output_tokens": True}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"max_output_tokens": "10"}}, "config.max_output_tokens"),
    ({"name": "a", "config": {"tools": "write_artifact"}}, "config.tools"),
    ({"name": "a", "config": {"tools": ["delete_everything"]}}, "config.tools"),
    ({"name": "a", "config": {"tools": ["read_artifact", "read_artifact"]}}, "config.tools"),
    ({"name": "a", "config": {"top_p": 0.9}}, "config.top_p"),
    ([{"name": "a"}], "body"),
    ("a", "body"),
    (42, "body"),
    (None, "body"),
]


def assert_invalid(response: httpx.Response, parameter: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == "INVALID_PARAMETER"
    assert body["error"]["details"]["parameter"] == parameter
    assert body["error"]["message"]


@pytest.mark.parametrize(("field", "value"), GOOD_CONFIG_VALUES)
async def test_valid_config_values_are_accepted(
    client: httpx.AsyncClient, auth: dict[str, str], field: str, value: Any
) -> None:
    response = await client.post(
        "/v1/agents", json={"name": "a", "config": {field: value}}, headers=auth
    )
    assert response.status_code == 201, response.text
    assert response.json()["config"][field] == value


@pytest.mark.parametrize(("body", "parameter"), BAD_BODIES)
async def test_invalid_create_is_400_on_the_field(
    client: httpx.AsyncClient, auth: dict[str, str], body: Any, parameter: str
) -> None:
    assert_invalid(await client.post("/v1/agents", json=body, headers=auth), parameter)
    assert (await client.get("/v1/agents", headers=auth)).json() == {"data": []}


@pytest.mark.parametrize(("body", "parameter"), [b for b in BAD_BODIES if b[0] != {}])
async def test_invalid_update_is_400_on_the_field_and_changes_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], body: Any, parameter: str
) -> None:
    created = await client.post("/v1/agents", json={"name": "keep"}, headers=auth)
    url = f"/v1/agents/{created.json()['agent_id']}"
    assert_invalid(await client.put(url, json=body, headers=auth), parameter)
    assert (await client.get(url, headers=auth)).json() == created.json()


@pytest.mark.parametrize(
    ("content", "parameter"),
    [(b"{not json", "body"), (b'{"name": "a",}', "body"), (b"", "body"), (b"[]", "body")],
)
async def test_unparseable_or_missing_body_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], content: bytes, parameter: str
) -> None:
    headers = {**auth, "Content-Type": "application/json"}
    assert_invalid(await client.post("/v1/agents", content=content, headers=headers), parameter)
    created = await client.post("/v1/agents", json={"name": "keep"}, headers=auth)
    url = f"/v1/agents/{created.json()['agent_id']}"
    assert_invalid(await client.put(url, content=content, headers=headers), parameter)


async def test_json_without_content_type_is_read_as_json(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post("/v1/agents", content=b'{"name": "plain"}', headers=auth)
    assert response.status_code == 201
    assert response.json()["name"] == "plain"
