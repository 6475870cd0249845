"""Names the runtime gives tools itself (pydantic-ai's output tool `final_result`, the built-in
tools) are refused in `config.tools` when an agent is written: such an agent used to be saved,
then fail every run with an output schema (docs/guide/tools.md#the-rules-of-configtools)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.agents.test_tools import function, mcp
from tests.agents.test_validation import assert_invalid

RESERVED: list[tuple[list[Any], str]] = [
    ([function(name="final_result")], "tools[0].name 'final_result' is reserved"),
    ([function(name="final_result_answer")], "tools[0].name 'final_result_answer' is reserved"),
    # The model sees an MCP tool as `<server_label>_<tool>`.
    (
        ["read_artifact", mcp(server_label="final", allowed_tools=["result", "search"])],
        "tools[1].allowed_tools 'result' (the model sees 'final_result') is reserved",
    ),
    (
        [mcp(server_label="final", require_approval={"always": ["result"]})],
        "tools[0].require_approval.always 'result' (the model sees 'final_result') is reserved",
    ),
    (
        [mcp(server_label="final_result")],
        "tools[0].server_label 'final_result' (the model sees 'final_result_<tool>') is reserved",
    ),
    # Names known when the agent is written that two tools of a run would share.
    (
        ["write_artifact", mcp(server_label="write", allowed_tools=["artifact"])],
        "tools[1].allowed_tools 'artifact' (the model sees 'write_artifact') is used by tools[0]",
    ),
    (
        [function(name="docs_search"), mcp(allowed_tools=["search"])],
        "tools[1].allowed_tools 'search' (the model sees 'docs_search') is used by tools[0] too",
    ),
    (
        [
            mcp(server_label="a", allowed_tools=["b_c"]),
            mcp(server_label="a_b", allowed_tools=["c"]),
        ],
        "tools[1].allowed_tools 'c' (the model sees 'a_b_c') is used by tools[0] too",
    ),
]

ALLOWED: list[list[Any]] = [
    [function(name="final_results")],
    [function(name="Final_Result")],
    [function(name="my_final_result")],
    [mcp(server_label="final")],  # its tools are only known when a run lists them
    [mcp(server_label="final", allowed_tools=["search"])],
    # Without the built-in, its name is free.
    [function(name="write_artifact")],
    # Tools of two servers under their own labels.
    [mcp(allowed_tools=["search"]), mcp(server_label="web", allowed_tools=["search"])],
]


async def test_reserved_and_shared_names_are_a_400_on_config_tools(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await client.post(
        "/v1/agents", json={"name": "kept", "config": {"tools": ["read_artifact"]}}, headers=auth
    )
    kept = created.json()
    url = f"/v1/agents/{kept['agent_id']}"
    for tools, says in RESERVED:
        body = {"name": "a", "config": {"tools": tools}}
        refused = await client.post("/v1/agents", json=body, headers=auth)
        assert_invalid(refused, "config.tools")
        assert says in refused.json()["error"]["message"], (tools, refused.json())
        assert_invalid(await client.put(url, json=body, headers=auth), "config.tools")
    # Nothing was written.
    assert (await client.get(url, headers=auth)).json() == kept
    listed = (await client.get("/v1/agents", headers=auth)).json()["data"]
    assert [agent["agent_id"] for agent in listed] == [kept["agent_id"]]


async def test_names_near_the_reserved_ones_are_accepted(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for tools in ALLOWED:
        body = {"name": "a", "config": {"tools": tools}}
        response = await client.post("/v1/agents", json=body, headers=auth)
        assert response.status_code == 201, (tools, response.text)
