"""A name the run's output tool takes, met only when a run lists an MCP server's tools, fails the
run with TOOL_ERROR saying so; and a model's tool call id too long for the wire is shown (and
answered) as a short id while the model gets its own id back (docs/guide/waiting-runs.md)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from fastmcp import FastMCP

from tests.processes import free_port
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer
from tests.runtime.mcp_server import McpTestServer

# Longer than the 200 characters an answer's `tool_call_id` may have.
LONG_ID = "call_" + "x7" * 150
SHORT_ID = re.compile(r"^call_[0-9a-f]{32}$")
SCHEMA = {"type": "object", "properties": {"word": {"type": "string"}}}


@pytest.fixture
async def chat_server(request: pytest.FixtureRequest) -> AsyncIterator[ChatServer]:
    """A model server whose tool calls (`request.param`: name and arguments) have `LONG_ID`."""
    tool_call = getattr(request, "param", None)
    async with ChatServer(tool_call=tool_call, call_id=LONG_ID) as server:
        yield server


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {
        "allow_private_targets": True,  # the servers of these tests are on loopback
        "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
        "llm_base_url": chat_server.base_url,
    }


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


def _mcp(url: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": label, "server_url": url, **extra}


@asynccontextmanager
async def _server_with_a_result_tool() -> AsyncIterator[str]:
    """The URL of an MCP server (loopback) with one tool, `result`."""
    server = FastMCP("reserved")

    @server.tool
    def result() -> str:
        return "result"

    port = free_port()
    app = server.http_app(path="/mcp", stateless_http=True)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", ws="none")
    served = uvicorn.Server(config)
    task = asyncio.create_task(served.serve())
    while not served.started:  # noqa: ASYNC110 - uvicorn offers no event to wait on
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        served.should_exit = True
        await task


async def test_an_mcp_tool_named_like_the_output_tool_fails_the_run_with_tool_error(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
) -> None:
    async with _server_with_a_result_tool() as url:
        # Its `result` tool is `final_result` to the model: known only once listed.
        agent_id = await make_agent(tools=[_mcp(url, "final")])
        run = await create_run(
            client, auth, "x", agent_id=agent_id, config={"output_schema": SCHEMA}
        )
        done = await wait_finished(client, auth, run["run_id"], within=30)
        # Without an output schema there is no output tool: the same agent runs.
        plain = await create_run(client, auth, "x", agent_id=agent_id)
        ran = await wait_finished(client, auth, plain["run_id"], within=30)
    assert ran["status"] == "completed", ran
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR", done["error"]
    message = done["error"]["message"]
    assert "'final_result'" in message and "reserved" in message, message
    assert "allowed_tools" in message, message


def _long_id_answered(chat_server: ChatServer) -> None:
    """The model's own id came back to it: in its call, and in the result answering it."""
    messages = chat_server.requests[-1]["messages"]
    [call] = next(m for m in messages if m["role"] == "assistant" and m.get("tool_calls"))[
        "tool_calls"
    ]
    assert call["id"] == LONG_ID
    last = messages[-1]
    assert (last["role"], last["tool_call_id"]) == ("tool", LONG_ID)


async def _short_id_everywhere(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, call_id: str
) -> None:
    """The run's events name the call by its short id only."""
    events = await events_of(client, auth, run_id)
    ids = {
        event["data"]["tool_call_id"]
        for event in events
        if isinstance(event["data"], dict) and "tool_call_id" in event["data"]
    }
    assert ids == {call_id}, ids
    assert LONG_ID not in str(events)


@pytest.mark.parametrize("chat_server", [("lookup", {"word": "atrium"})], indirect=True)
async def test_a_long_function_call_id_is_answered_by_its_short_id(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=[LOOKUP])
    run = await create_run(client, auth, "what is an atrium?", agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert SHORT_ID.match(call["id"]), call["id"]
    assert (call["kind"], call["name"], call["arguments"]) == (
        "function",
        "lookup",
        {"word": "atrium"},
    )

    answer = {"tool_outputs": [{"tool_call_id": call["id"], "output": "a central hall"}]}
    response = await act(client, auth, run["run_id"], answer)
    assert response.status_code == 200, response.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == f"{ANSWER} The tool said: a central hall"
    assert chat_server.requests[-1]["messages"][-1]["content"] == "a central hall"
    _long_id_answered(chat_server)
    await _short_id_everywhere(client, auth, run["run_id"], call["id"])


@pytest.mark.parametrize("chat_server", [("docs_echo", {"text": "ship it"})], indirect=True)
async def test_a_long_approval_call_id_is_answered_by_its_short_id(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
    mcp_server: McpTestServer,
) -> None:
    tools = [_mcp(mcp_server.url, "docs", require_approval="always")]
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=tools)
    run = await create_run(client, auth, "say it", agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert SHORT_ID.match(call["id"]), call["id"]
    assert (call["kind"], call["name"], call["server_label"]) == ("approval", "echo", "docs")

    approval = {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
    response = await act(client, auth, run["run_id"], approval)
    assert response.status_code == 200, response.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert [c.name for c in mcp_server.seen.calls] == ["echo"]
    assert chat_server.requests[-1]["messages"][-1]["content"] == "echo: ship it"
    _long_id_answered(chat_server)
    await _short_id_everywhere(client, auth, run["run_id"], call["id"])
