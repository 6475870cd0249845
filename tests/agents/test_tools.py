"""`config.tools` with MCP servers and functions, and `config.output_schema`:
validation, write-only headers (masked in every response, encrypted in the database), and
the key that encrypts them."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from atrium.db.engine import Database
from atrium.db.models import Agent
from atrium.secrets_at_rest import KEY_FILE_SUFFIX, SecretBox, key_file_of
from atrium.settings import Settings
from tests.agents.test_validation import assert_invalid

TOKEN = "Bearer sk-live-walrus-7781"
PUBLIC_URL = "https://mcp.example.test/mcp"  # validated only: nothing connects to it here
KEY = "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU="
MCP: dict[str, Any] = {"type": "mcp", "server_label": "docs", "server_url": PUBLIC_URL}
LOOKUP: dict[str, Any] = {
    "type": "function",
    "name": "lookup",
    "description": "Find a customer.",
    "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
}
# What a response shows for an entry that leaves `on_error` out: its defaults.
ON_ERROR: dict[str, Any] = {"on_error": "fail", "max_consecutive_errors": 3}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
}


def mcp(**changes: Any) -> dict[str, Any]:
    return {**MCP, **changes}


def function(**changes: Any) -> dict[str, Any]:
    return {**LOOKUP, **changes}


BAD_TOOLS: list[tuple[Any, str]] = [
    ([{"type": "mcp", "server_url": PUBLIC_URL}], "tools[0].server_label is required"),
    ([mcp(server_label="1docs")], "tools[0].server_label String should match pattern"),
    ([mcp(server_label="docs-v2")], "server_label"),
    ([mcp(server_label="d" * 33)], "server_label"),
    ([mcp(server_label="")], "server_label"),
    ([mcp(server_label=7)], "server_label"),
    ([{"type": "mcp", "server_label": "docs"}], "tools[0].server_url is required"),
    ([mcp(server_url="ftp://files.example.test/mcp")], "must be an http or https URL"),
    ([mcp(server_url="not a url")], "server_url"),
    ([mcp(server_url="https://user:pw@mcp.example.test/")], "must not carry credentials"),
    ([mcp(server_url="http://127.0.0.1:9/mcp")], "ATRIUM_ALLOW_PRIVATE_TARGETS"),
    ([mcp(server_url="http://10.1.2.3/mcp")], "not a public address"),
    ([mcp(server_url="http://localhost:8000/mcp")], "localhost"),
    ([mcp(server_url="https://x.example.test/" + "a" * 2100)], "server_url"),
    ([mcp(headers=["Authorization"])], "tools[0].headers"),
    ([mcp(headers={"Authorization": 5})], "tools[0].headers.Authorization"),
    ([mcp(headers={"Host": "evil.example.com"})], "Host is set by atrium itself"),
    ([mcp(headers={"Mcp-Session-Id": "x"})], "set by atrium itself"),
    ([mcp(headers={"bad name": "x"})], "is not a header name"),
    ([mcp(headers={"X-Token": "a\r\nInjected: 1"})], "control characters"),
    ([mcp(headers={"X-Token": ""})], "1-8192 ASCII characters"),
    ([mcp(headers={"X-Token": "é"})], "ASCII"),
    ([mcp(headers={"X-Token": "x" * 8193})], "1-8192"),
    ([mcp(headers={"X-A": "1", "x-a": "2"})], "appears twice"),
    ([mcp(headers={f"X-{n}": "v" for n in range(33)})], "at most 32 headers"),
    ([mcp(allowed_tools="search")], "tools[0].allowed_tools"),
    ([mcp(allowed_tools=["search", "search"])], "must not repeat"),
    ([mcp(allowed_tools=["has space"])], "tools[0].allowed_tools[0]"),
    ([mcp(require_approval="sometimes")], "tools[0].require_approval"),
    ([mcp(require_approval={"always": "search"})], "require_approval"),
    ([mcp(require_approval={"never": ["search"]})], "require_approval"),
    ([mcp(require_approval={"always": ["a", "a"]})], "must not repeat"),
    (
        [mcp(allowed_tools=["search"], require_approval={"always": ["delete"]})],
        "names 'delete', which allowed_tools leaves out",
    ),
    ([mcp(idempotent="yes")], "tools[0].idempotent must be true, false or a list of the"),
    ([mcp(idempotent=None)], "tools[0].idempotent must be true, false or a list of the"),
    ([mcp(idempotent=1)], "tools[0].idempotent must be true, false or a list of the"),
    ([mcp(idempotent=["has space"])], "tools[0].idempotent.names[0]"),
    ([mcp(idempotent=["a", "a"])], "tools[0].idempotent must not repeat"),
    ([mcp(idempotent=["x"] * 257)], "tools[0].idempotent.names List should have at most 256"),
    (
        [mcp(allowed_tools=["search"], idempotent=["delete"])],
        "tools[0].idempotent names 'delete', which allowed_tools leaves out",
    ),
    ([mcp(extra=1)], "tools[0].extra"),
    ([{"type": "web_search"}], 'tools[0].type must be "mcp" or "function"'),
    ([{"server_label": "docs"}], "tools[0].type"),
    ([{"type": {}, "name": "x"}], 'tools[0].type must be "mcp" or "function"'),
    ([42], "tools[0] must be a built-in tool's name or an object"),
    (["read_artifact", "delete_everything"], "tools[1]: unknown tool 'delete_everything'"),
    ([{"type": "function"}], "tools[0].name is required"),
    ([function(name="look up")], "tools[0].name"),
    ([function(name="x" * 65)], "tools[0].name"),
    ([function(description="d" * 1025)], "tools[0].description"),
    ([function(parameters={"type": "string"})], 'must be an object schema: {"type": "object"'),
    ([function(parameters={"properties": {}})], "tools[0].parameters must be an object schema"),
    (
        [function(parameters={"type": "object", "properties": {"a": {"type": "nope"}}})],
        "tools[0].parameters is not a valid JSON Schema",
    ),
    ([function(parameters="{}")], "tools[0].parameters"),
    (["write_artifact", "write_artifact"], "'write_artifact' is used twice"),
    (["write_artifact", function(name="write_artifact")], "'write_artifact' is used twice"),
    ([mcp(), mcp(server_url="https://other.example.test/mcp")], "'docs' is used twice"),
    ([mcp(), function(name="docs")], "'docs' is used twice"),
    ([function(name=f"f{n}") for n in range(65)], "at most 64 tools"),
    ({"write_artifact": True}, "tools must be a list"),
]

BAD_SCHEMAS: list[tuple[Any, str]] = [
    ([], "config.output_schema"),
    ("object", "config.output_schema"),
    ({"type": "string"}, 'must be an object schema: {"type": "object"'),
    ({}, "must be an object schema"),
    ({"type": "object", "properties": {"a": {"type": "nope"}}}, "is not a valid JSON Schema"),
    ({"type": "object", "required": "a"}, "is not a valid JSON Schema"),
    (
        {"type": "object", "properties": {"a": {"$ref": "https://schemas.example.test/a.json"}}},
        "may only use local $ref",
    ),
    (
        {
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        },
        "cannot be used for structured output",
    ),
    (
        {"type": "object", "description": "x" * 70_000},
        "must be at most 65536 bytes as JSON",
    ),
    ({"type": "object", "description": "nul \u0000"}, "must not contain NUL characters"),
    ({"type": "object", "$schema": {}}, "names an unknown $schema"),
    ({"type": "object", "$schema": "https://schemas.example.test/mine"}, "unknown $schema"),
    (
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        "has a $ref that points to nothing: '#/$defs/missing'",
    ),
    # Refs outside $defs passed this check and then failed every run (INTERNAL_ERROR).
    (
        {"type": "object", "properties": {"next": {"$ref": "#"}}},
        "$ref '#' must point into #/$defs",
    ),
    (
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/word"}},
            "definitions": {"word": {"type": "string"}},
        },
        "$ref '#/definitions/word' must point into #/$defs",
    ),
    (
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"$ref": "#/properties/a"}},
        },
        "$ref '#/properties/a' must point into #/$defs",
    ),
]


async def _create(client: httpx.AsyncClient, auth: dict[str, str], **config: Any) -> dict[str, Any]:
    response = await client.post(
        "/v1/agents", json={"name": "tools", "config": config}, headers=auth
    )
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def _stored_config(db: Database, agent_id: str) -> dict[str, Any]:
    async with db.session(write=False) as session:
        config = await session.scalar(select(Agent.config).where(Agent.id == agent_id))
    assert isinstance(config, dict)
    return config


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"secrets_key": KEY}


async def test_every_invalid_tool_is_a_400_on_config_tools(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    kept = await _create(client, auth, tools=["read_artifact"])
    url = f"/v1/agents/{kept['agent_id']}"
    for tools, says in BAD_TOOLS:
        body = {"name": "a", "config": {"tools": tools}}
        created = await client.post("/v1/agents", json=body, headers=auth)
        assert_invalid(created, "config.tools")
        assert says in created.json()["error"]["message"], (tools, created.json())
        assert_invalid(await client.put(url, json=body, headers=auth), "config.tools")
    assert (await client.get(url, headers=auth)).json() == kept
    assert [
        a["agent_id"] for a in (await client.get("/v1/agents", headers=auth)).json()["data"]
    ] == [kept["agent_id"]]


async def test_every_invalid_output_schema_is_a_400_on_config_output_schema(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    kept = await _create(client, auth, output_schema=SCHEMA)
    url = f"/v1/agents/{kept['agent_id']}"
    for schema, says in BAD_SCHEMAS:
        body = {"name": "a", "config": {"output_schema": schema}}
        created = await client.post("/v1/agents", json=body, headers=auth)
        assert_invalid(created, "config.output_schema")
        assert says in created.json()["error"]["message"], (schema, created.json())
        assert_invalid(await client.put(url, json=body, headers=auth), "config.output_schema")
    assert (await client.get(url, headers=auth)).json() == kept


async def test_tools_and_schema_round_trip_with_header_values_masked(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, settings: Settings
) -> None:
    server = mcp(
        headers={"Authorization": TOKEN, "X-Tenant": "acme"},
        allowed_tools=["search", "fetch"],
        require_approval={"always": ["fetch"]},
        idempotent=["search"],
    )
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **SCHEMA}
    agent = await _create(
        client, auth, tools=["read_artifact", server, LOOKUP], output_schema=draft7
    )
    shown = {**server, "headers": {"Authorization": "***", "X-Tenant": "***"}, **ON_ERROR}
    assert agent["config"]["tools"] == ["read_artifact", shown, {**LOOKUP, **ON_ERROR}]
    assert agent["config"]["output_schema"] == draft7
    url = f"/v1/agents/{agent['agent_id']}"
    assert (await client.get(url, headers=auth)).json() == agent
    assert (await client.get("/v1/agents", headers=auth)).json()["data"] == [agent]

    # Stored encrypted: the column never holds the value, and the key opens it.
    stored = await _stored_config(db, agent["agent_id"])
    assert TOKEN not in json.dumps(stored) and "walrus" not in json.dumps(stored)
    token = stored["tools"][1]["headers"]["Authorization"]
    assert token.startswith("gAAAA")  # a Fernet token
    assert SecretBox.of(settings).decrypt(token) == TOKEN

    defaults = await _create(client, auth, tools=[mcp(server_label="plain")])
    assert defaults["config"]["tools"] == [
        {
            "type": "mcp",
            "server_label": "plain",
            "server_url": PUBLIC_URL,
            "headers": {},
            "allowed_tools": None,
            "require_approval": "never",
            "idempotent": False,
            "on_error": "fail",
            "max_consecutive_errors": 3,
        }
    ]
    every = await _create(client, auth, tools=[mcp(server_label="safe", idempotent=True)])
    assert every["config"]["tools"][0]["idempotent"] is True
    bare = await _create(client, auth, tools=[{"type": "function", "name": "ping"}])
    assert bare["config"]["tools"][0]["parameters"] == {"type": "object", "properties": {}}


async def test_a_put_that_sends_the_mask_back_keeps_the_stored_value(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, settings: Settings
) -> None:
    box = SecretBox.of(settings)
    agent = await _create(client, auth, tools=[mcp(headers={"Authorization": TOKEN})])
    url = f"/v1/agents/{agent['agent_id']}"
    shown = agent["config"]["tools"]

    # Round-tripping what GET shows, plus a new header, keeps the old value.
    shown[0]["headers"]["X-Tenant"] = "acme"
    response = await client.put(url, json={"config": {"tools": shown}}, headers=auth)
    assert response.status_code == 200, response.text
    headers = (await _stored_config(db, agent["agent_id"]))["tools"][0]["headers"]
    assert {name: box.decrypt(token) for name, token in headers.items()} == {
        "Authorization": TOKEN,
        "X-Tenant": "acme",
    }

    # Another key of the config leaves the tools as they are.
    await client.put(url, json={"config": {"temperature": 1}}, headers=auth)
    assert (await _stored_config(db, agent["agent_id"]))["tools"][0]["headers"] == headers

    # A new value replaces the old one.
    replaced = [mcp(headers={"Authorization": "Bearer new", "X-Tenant": "***"})]
    assert (await client.put(url, json={"config": {"tools": replaced}}, headers=auth)).is_success
    headers = (await _stored_config(db, agent["agent_id"]))["tools"][0]["headers"]
    assert box.decrypt(headers["Authorization"]) == "Bearer new"
    assert box.decrypt(headers["X-Tenant"]) == "acme"

    # The mask keeps nothing that is not there, nor for another server URL (where the secret
    # would go to a server of the caller's choosing).
    for tools, says in [
        ([mcp(headers={"X-Other": "***"})], 'headers.X-Other is "***" but no value is stored'),
        ([mcp(server_label="new", headers={"Authorization": "***"})], "no value is stored"),
        (
            [mcp(server_url="https://moved.example.test/mcp", headers={"Authorization": "***"})],
            "send the value again when server_url changes",
        ),
    ]:
        response = await client.put(url, json={"config": {"tools": tools}}, headers=auth)
        assert_invalid(response, "config.tools")
        assert says in response.json()["error"]["message"]
    assert (await _stored_config(db, agent["agent_id"]))["tools"][0]["headers"] == headers

    created = await client.post(
        "/v1/agents",
        json={"name": "a", "config": {"tools": [mcp(headers={"Authorization": "***"})]}},
        headers=auth,
    )
    assert_invalid(created, "config.tools")


@pytest.mark.parametrize("settings_overrides", [{}])
async def test_without_a_configured_key(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, settings: Settings
) -> None:
    """SQLite keeps a key file beside the database (0600); PostgreSQL refuses to store
    headers without ATRIUM_SECRETS_KEY, and agents without headers work as ever."""
    key_file = key_file_of(settings.database_url)
    body = {"name": "a", "config": {"tools": [mcp(headers={"Authorization": TOKEN})]}}
    response = await client.post("/v1/agents", json=body, headers=auth)
    if key_file is None:  # PostgreSQL
        assert_invalid(response, "config.tools")
        assert "ATRIUM_SECRETS_KEY" in response.json()["error"]["message"]
        assert (await _create(client, auth, tools=[mcp()]))["config"]["tools"][0]["headers"] == {}
        return
    assert response.status_code == 201, response.text
    assert key_file.name == Path(settings.database_url.split("///")[1]).name + KEY_FILE_SUFFIX
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    stored = await _stored_config(db, response.json()["agent_id"])
    token = stored["tools"][0]["headers"]["Authorization"]
    assert SecretBox.of(settings).decrypt(token) == TOKEN
    assert TOKEN not in key_file.read_text()


def test_a_malformed_key_stops_the_start() -> None:
    with pytest.raises(ValueError, match="32 url-safe base64-encoded bytes"):
        Settings(_env_file=None, secrets_key="not-a-key")  # type: ignore[call-arg]
    # Several keys rotate: the first encrypts, each decrypts.
    old = Settings(_env_file=None, secrets_key=KEY)  # type: ignore[call-arg]
    token = SecretBox.of(old).encrypt("v")
    new_key = "8nA1bJ3mZ7q0Lr5sT2uW4xY6zB8cD0eF1gH3iJ5kL7M="
    rotated = Settings(_env_file=None, secrets_key=f"{new_key},{KEY}")  # type: ignore[call-arg]
    assert SecretBox.of(rotated).decrypt(token) == "v"
    assert SecretBox.of(rotated).encrypt("v") != token


async def test_a_function_may_use_refs_an_output_schema_may_not(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    # A function's parameters reach the model as written; an output schema becomes pydantic's
    # output tool, which resolves only #/$defs. The same schema: one accepted, one a 400.
    schema = {
        "type": "object",
        "properties": {"word": {"$ref": "#/definitions/word"}},
        "definitions": {"word": {"type": "string"}},
    }
    created = await _create(client, auth, tools=[function(parameters=schema)])
    assert created["config"]["tools"][0]["parameters"] == schema
    refused = await client.post(
        "/api/v1/public/agent/runs",
        json={"prompt": "hi", "config": {"output_schema": schema}},
        headers=auth,
    )
    assert_invalid(refused, "config.output_schema")
    assert "must point into #/$defs" in refused.json()["error"]["message"]
