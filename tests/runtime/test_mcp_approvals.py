"""MCP tools under `require_approval`, against a real MCP server (fastmcp on loopback): the run
waits, an approved call reaches the server, a denied one never does; and a function tool round
trip with an OpenAI-compatible server emitting the tool call (docs/design.md#requires-action)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer
from tests.runtime.mcp_server import McpTestServer


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    async with ChatServer(tool_call=("lookup", {"word": "atrium"})) as server:
        yield server


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {
        "allow_private_targets": True,  # the MCP server of these tests is on loopback
        "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
        "llm_base_url": chat_server.base_url,
    }


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


def docs(url: str, require_approval: Any) -> dict[str, Any]:
    return {
        "type": "mcp",
        "server_label": "docs",
        "server_url": url,
        "require_approval": require_approval,
    }


async def test_an_approved_call_reaches_the_server(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[docs(mcp_server.url, {"always": ["echo"]})])
    prompt = 'call docs_add {"a": 1, "b": 2}\ncall docs_echo {"text": "ship it"}'
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert {k: call[k] for k in ("kind", "name", "server_label", "arguments")} == {
        "kind": "approval",
        "name": "echo",
        "server_label": "docs",
        "arguments": {"text": "ship it"},
    }
    # `add` needs no approval and was called; `echo` waits.
    assert [c.name for c in mcp_server.seen.calls] == ["add"]

    response = await act(
        client, auth, run["run_id"], {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
    )
    assert response.status_code == 200, response.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert [c.name for c in mcp_server.seen.calls] == ["add", "echo"]
    assert "docs_echo returned: echo: ship it" in done["result"]
    assert done["billing"]["tool_calls"] == 2
    assert done["billing"]["requests"] == 3
    called = [
        e["data"]["name"]
        for e in await events_of(client, auth, run["run_id"])
        if e["event"] == "tool.called"
    ]
    assert called == ["add", "echo"]


async def test_a_denied_call_never_reaches_the_server(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[docs(mcp_server.url, "always")])
    run = await create_run(client, auth, 'call docs_echo {"text": "rm -rf"}', agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    denial = {"tool_call_id": call["id"], "approve": False, "reason": "not on a Friday"}
    response = await act(client, auth, run["run_id"], {"approvals": [denial]})
    assert response.status_code == 200, response.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert mcp_server.seen.calls == []
    assert "docs_echo failed: denied: not on a Friday" in done["result"]
    assert done["billing"]["tool_calls"] == 0
    events = await events_of(client, auth, run["run_id"])
    assert not [e for e in events if e["event"] == "tool.called"]
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert (returned["output"], returned["is_error"]) == ("denied: not on a Friday", True)
    # Named as in the call it answers, which the model saw as docs_echo.
    assert (returned["name"], returned["server_label"]) == ("echo", "docs")


async def test_a_function_tool_round_trip_over_the_wire(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=[LOOKUP])
    run = await create_run(client, auth, "what is an atrium?", agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert (call["id"], call["kind"], call["name"], call["arguments"]) == (
        "call_1",
        "function",
        "lookup",
        {"word": "atrium"},
    )
    # The server was offered the caller's function with its schema.
    [offered] = chat_server.requests[0]["tools"]
    assert offered["function"]["name"] == "lookup"
    assert offered["function"]["parameters"]["required"] == ["word"]

    answer = {"tool_outputs": [{"tool_call_id": "call_1", "output": "a central hall"}]}
    assert (await act(client, auth, run["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == f"{ANSWER} The tool said: a central hall"
    # The tool's output went back to the model as the answer to call_1.
    last = chat_server.requests[-1]["messages"][-1]
    assert (last["role"], last["tool_call_id"], last["content"]) == (
        "tool",
        "call_1",
        "a central hall",
    )
    assert done["billing"]["requests"] == 2
    assert done["billing"]["input_tokens"] == 240
