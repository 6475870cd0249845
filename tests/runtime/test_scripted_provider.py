"""`bench/slow_llm.py` as an `openai-compatible:` provider that calls tools: a run's prompt is
its script (`call NAME {json}` lines, an `output {json}` line), as with `atrium:offline`, but
every call and answer goes over the wire as a real provider sends it (streamed tool-call
deltas, the output tool of an output schema). The server runs in its own process and writes
each request body it receives to a log, which the tests read."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from tests import processes
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.mcp_server import McpTestServer

MODEL = "openai-compatible:scripted"
WORDS = 5
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "confidence": {"type": "number"},
        "tone": {"enum": ["plain", "warm"]},
        "notes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["answer", "confidence", "tone"],
}


class Received:
    """The request bodies the model server has received, from its log."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.start = 0

    def mark(self) -> None:
        """Later `since()` calls see only what is received from now on."""
        self.start = self.log.stat().st_size if self.log.exists() else 0

    def since(self) -> list[dict[str, Any]]:
        with self.log.open("rb") as log:
            log.seek(self.start)
            return [json.loads(line) for line in log.read().splitlines()]


@pytest.fixture(scope="module")
def scripted_llm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Received]]:
    log = tmp_path_factory.mktemp("scripted-llm") / "requests.jsonl"
    with processes.slow_llm(pause=0.005, words=WORDS, log=log) as url:
        yield url, Received(log)


@pytest.fixture
def received(scripted_llm: tuple[str, Received]) -> Received:
    _, seen = scripted_llm
    seen.mark()
    return seen


@pytest.fixture
def settings_overrides(scripted_llm: tuple[str, Received]) -> dict[str, object]:
    url, _ = scripted_llm
    return {
        "llm_base_url": url,
        "allow_private_targets": True,  # the MCP server is on loopback
        "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
    }


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


def offered(body: dict[str, Any]) -> list[str]:
    return sorted(tool["function"]["name"] for tool in body.get("tools") or [])


async def test_mcp_calls_and_an_output_line_over_the_wire(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
    received: Received,
) -> None:
    docs = {"type": "mcp", "server_label": "docs", "server_url": mcp_server.url}
    agent_id = await make_agent(model=MODEL, tools=[docs], output_schema=OUTPUT_SCHEMA)
    prompt = (
        "Add, then echo.\n"
        'call docs_add {"a": 2, "b": 40}\n'
        'call docs_echo {"text": "a tool call that streams in several pieces"}\n'
        'output {"answer": "forty-two", "confidence": 0.9, "tone": "warm"}'
    )
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])

    assert done["status"] == "completed", done
    assert done["result"] == {"answer": "forty-two", "confidence": 0.9, "tone": "warm"}
    assert [(c.name, c.arguments) for c in mcp_server.seen.calls] == [
        ("add", {"a": 2, "b": 40}),
        ("echo", {"text": "a tool call that streams in several pieces"}),
    ]
    events = await events_of(client, auth, run["run_id"])
    called = [e["data"] for e in events if e["event"] == "tool.called"]
    returned = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert [(c["tool_call_id"], c["name"], c["server_label"], c["arguments"]) for c in called] == [
        ("call_1", "add", "docs", {"a": 2, "b": 40}),
        ("call_2", "echo", "docs", {"text": "a tool call that streams in several pieces"}),
    ]
    assert [(r["tool_call_id"], r["output"], r["is_error"]) for r in returned] == [
        ("call_1", "42", False),
        ("call_2", "echo: a tool call that streams in several pieces", False),
    ]
    assert done["billing"]["tool_calls"] == 2 and done["billing"]["requests"] == 3

    first, second, third = received.since()
    assert all(body["stream"] is True and body["model"] == "scripted" for body in received.since())
    assert offered(first) == [
        "docs_add",
        "docs_b_c",
        "docs_c",
        "docs_echo",
        "docs_fail",
        "docs_flaky",
        "docs_nested",
        "docs_sleep",
        "final_result",
    ]
    [output_tool] = [t for t in first["tools"] if t["function"]["name"] == "final_result"]
    assert output_tool["function"]["parameters"]["required"] == ["answer", "confidence", "tone"]
    assert first["messages"][-1] == {"role": "user", "content": prompt}
    # Each later request carries the calls answered so far, which is how far the script got.
    assert [m["role"] for m in second["messages"][-2:]] == ["assistant", "tool"]
    [made] = second["messages"][-2]["tool_calls"]
    assert (made["id"], made["function"]["name"]) == ("call_1", "docs_add")
    assert json.loads(made["function"]["arguments"]) == {"a": 2, "b": 40}
    assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_1", "content": "42"}
    assert [m.get("tool_call_id") for m in third["messages"] if m["role"] == "tool"] == [
        "call_1",
        "call_2",
    ]


async def test_a_function_call_waits_and_the_schema_gets_a_minimal_answer(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    received: Received,
) -> None:
    agent_id = await make_agent(model=MODEL, tools=[LOOKUP], output_schema=OUTPUT_SCHEMA)
    run = await create_run(client, auth, 'call lookup {"word": "atrium"}', agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert (call["id"], call["kind"], call["name"], call["arguments"]) == (
        "call_1",
        "function",
        "lookup",
        {"word": "atrium"},
    )
    answer = {"tool_outputs": [{"tool_call_id": "call_1", "output": "a central hall"}]}
    assert (await act(client, auth, run["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])

    assert done["status"] == "completed", done
    # No `output` line: the smallest object the schema takes (required properties only).
    assert done["result"] == {"answer": "", "confidence": 0, "tone": "plain"}
    events = await events_of(client, auth, run["run_id"])
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert (returned["name"], returned["output"]) == ("lookup", "a central hall")
    first, resumed = received.since()
    assert offered(first) == ["final_result", "lookup"]
    assert resumed["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "a central hall",
    }


async def test_a_text_answer_quotes_each_output_and_a_plain_prompt_gets_the_words(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    received: Received,
) -> None:
    agent_id = await make_agent(model=MODEL, tools=["write_artifact", "read_artifact"])
    prompt = (
        'call write_artifact {"name": "a.txt", "content": "alpha"}\n'
        'call read_artifact {"name": "a.txt"}'
    )
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].splitlines()[1:] == [
        "write_artifact returned: Saved artifact a.txt (5 bytes, text/plain).",
        "read_artifact returned: alpha",
    ]
    assert done["result"].startswith("Answer (turn 1) to: call write_artifact")
    frames = await events_of(client, auth, run["run_id"])
    text = "".join(f["data"]["text"] for f in frames if f["event"] == "message.delta")
    assert text == done["result"]

    # Tools offered but no script: the words, as the server always answered.
    plain = await create_run(client, auth, "Just talk.", agent_id=agent_id)
    talked = await wait_finished(client, auth, plain["run_id"])
    assert talked["result"] == " ".join(f"word{i}" for i in range(1, WORDS + 1))
    assert len(received.since()) == 4


class Sum(BaseModel):
    total: int


async def test_non_streamed_requests_follow_the_script_too(
    scripted_llm: tuple[str, Received],
) -> None:
    # pydantic-ai's own OpenAI model, whose `run` asks without `stream`.
    url, _ = scripted_llm
    seen: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        seen.append((a, b))
        return a + b

    # Leaving the provider's context closes the HTTP client it made.
    async with OpenAIProvider(base_url=url, api_key="none") as provider:
        agent = Agent(OpenAIChatModel("scripted", provider=provider), output_type=Sum, tools=[add])
        result = await agent.run('call add {"a": 2, "b": 3}\noutput {"total": 5}')
    assert seen == [(2, 3)]
    assert result.output == Sum(total=5)
