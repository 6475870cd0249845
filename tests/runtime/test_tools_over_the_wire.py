"""MCP tools and structured output with `openai-compatible:<model>`: the chat server asks for
the calls over the wire, as a real provider would."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer
from tests.runtime.mcp_server import McpTestServer

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"}},
    "required": ["answer", "confidence"],
}


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    async with ChatServer(
        tool_call=("docs_echo", {"text": "over the wire"}),
        output={"answer": "forty-two", "confidence": 0.9},
    ) as server:
        yield server


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {
        "llm_base_url": chat_server.base_url,
        "allow_private_targets": True,
        "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
    }


async def test_a_provider_calls_an_mcp_tool_and_gets_its_result(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
    mcp_server: McpTestServer,
) -> None:
    chat_server.output = None  # a text answer this time
    server = {"type": "mcp", "server_label": "docs", "server_url": mcp_server.url}
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=[server])
    run = await create_run(client, auth, "use the docs", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done

    offered = [tool["function"]["name"] for tool in chat_server.requests[0]["tools"]]
    assert sorted(offered) == [
        "docs_add",
        "docs_b_c",
        "docs_c",
        "docs_echo",
        "docs_fail",
        "docs_flaky",
        "docs_nested",
        "docs_sleep",
    ]
    assert [(c.name, c.arguments) for c in mcp_server.seen.calls] == [
        ("echo", {"text": "over the wire"})
    ]
    returned = chat_server.requests[1]["messages"][-1]
    assert returned["role"] == "tool" and returned["content"] == "echo: over the wire"
    assert done["result"].strip() == f"{ANSWER} The tool said: echo: over the wire"
    assert done["billing"]["tool_calls"] == 1 and done["billing"]["requests"] == 2

    events = (
        await client.get(
            f"{RUNS}/{run['run_id']}/events", headers={**auth, "Accept": "application/json"}
        )
    ).json()["data"]
    called = [e["data"] for e in events if e["event"] == "tool.called"]
    assert [(c["name"], c["server_label"], c["arguments"]) for c in called] == [
        ("echo", "docs", {"text": "over the wire"})
    ]
    # The provider's own call id names the call in both events.
    tool_call_id = chat_server.requests[1]["messages"][-1]["tool_call_id"]
    ids = {e["data"]["tool_call_id"] for e in events if e["event"].startswith("tool.")}
    assert ids == {tool_call_id}


async def test_a_provider_answers_with_the_output_schema(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    chat_server.tool_call = None
    agent_id = await make_agent(
        model="openai-compatible:local-llm", tools=[], output_schema=OUTPUT_SCHEMA
    )
    done = await wait_finished(
        client, auth, (await create_run(client, auth, "how much?", agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done
    assert done["result"] == {"answer": "forty-two", "confidence": 0.9}
    [output_tool] = chat_server.requests[0]["tools"]
    assert output_tool["function"]["name"] == "final_result"
    assert output_tool["function"]["parameters"]["required"] == ["answer", "confidence"]
    assert done["billing"]["tool_calls"] == 0  # the answer is not a tool call
