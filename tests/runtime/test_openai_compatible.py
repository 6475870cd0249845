"""`openai-compatible:<model>` over the wire, against a chat-completions server run here."""

from __future__ import annotations

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, read_stream, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer, chat_server

__all__ = ["chat_server"]


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {
        "llm_base_url": chat_server.base_url,
        "llm_api_key": "sk-local-test",
        "credit_prices": {"openai-compatible:local-llm": {"input": 2.0, "output": 10.0}},
    }


async def test_a_run_streams_calls_tools_and_bills_over_the_wire(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    agent_id = await make_agent(
        model="openai-compatible:local-llm",
        temperature=0.2,
        instructions="Be brief.",
        max_output_tokens=256,
        tools=["write_artifact"],
    )
    run = await create_run(client, auth, "the queue design", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == ANSWER
    [artifact] = done["artifacts"]
    assert (artifact["name"], artifact["mime_type"]) == ("notes.txt", "text/plain")
    content = await client.get(
        artifact["download_url"].removeprefix("http://127.0.0.1:8000"), headers=auth
    )
    assert content.text == "notes on the queue design"
    # Two model requests, usage from the server's last chunks, priced per million tokens.
    assert done["billing"] == {
        "credits": (240 * 2.0 + 60 * 10.0) / 1_000_000,
        "input_tokens": 240,
        "output_tokens": 60,
        "requests": 2,
        "tool_calls": 1,
    }

    first = chat_server.requests[0]
    assert first["model"] == "local-llm"
    assert first["stream"] is True
    assert first["temperature"] == 0.2
    assert first.get("max_tokens", first.get("max_completion_tokens")) == 256
    assert [tool["function"]["name"] for tool in first["tools"]] == ["write_artifact"]
    assert any("Be brief." in str(m.get("content")) for m in first["messages"])
    assert chat_server.requests[1]["messages"][-1]["role"] == "tool"

    frames = await read_stream(client, auth, run["run_id"])
    text = "".join(f["data"]["text"] for f in frames if f["event"] == "message.delta")
    assert text == done["result"]
    assert len([f for f in frames if f["event"] == "message.delta"]) >= 1
    usage = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (usage["runs"], usage["input_tokens"], usage["output_tokens"]) == (1, 240, 60)
    assert usage["credits"] == done["billing"]["credits"]


async def test_thread_history_is_sent_to_the_provider(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    agent_id = await make_agent(model="openai-compatible:local-llm", tools=[])
    first = await create_run(client, auth, "remember the number 7", agent_id=agent_id)
    await wait_finished(client, auth, first["run_id"])
    second = await create_run(
        client, auth, "what was the number?", agent_id=agent_id, thread_id=first["thread_id"]
    )
    assert (await wait_finished(client, auth, second["run_id"]))["status"] == "completed"
    sent = chat_server.requests[-1]["messages"]
    contents = [str(message.get("content")) for message in sent]
    assert any("remember the number 7" in c for c in contents)
    assert any(ANSWER.split()[0] in c for c in contents if "remember" not in c)
    assert "what was the number?" in contents[-1]


async def test_a_provider_error_fails_the_run_with_a_clear_code(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(model="openai-compatible:broken")
    run = await create_run(client, auth, "anything", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed"
    assert done["error"]["code"] == "MODEL_ERROR"
    assert "400" in done["error"]["message"] and "model is broken" in done["error"]["message"]
    assert "result" not in done
    frames = await read_stream(client, auth, run["run_id"])
    assert frames[-1]["event"] == "run.failed"
    assert frames[-1]["data"]["error"] == done["error"]
    listed = await client.get(RUNS, params={"status": "failed"}, headers=auth)
    assert [r["run_id"] for r in listed.json()["data"]] == [run["run_id"]]
