"""ATRIUM_TRACE_CONTENT=true: the prompt, the answers and the tools' arguments and outputs go
into the spans too, in the GenAI conventions' attributes."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, wait_finished
from tests.traces.helpers import TRACEPARENT, by_name, root_received, same_spans, trace_of
from tests.traces.otlp_receiver import OtlpReceiver

PROMPT = 'Weather?\ncall get_weather {"city": "Paris"}'


@pytest.fixture
def settings_overrides(receiver: OtlpReceiver) -> dict[str, object]:
    return {"otlp_endpoint": receiver.endpoint, "trace_content": True}


async def test_content_is_in_the_spans_when_enabled(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    receiver: OtlpReceiver,
) -> None:
    agent_id = await make_agent(
        tools=[
            {
                "type": "function",
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ]
    )
    created = await client.post(
        RUNS,
        json={"prompt": PROMPT, "agent_id": agent_id},
        headers={**auth, "traceparent": TRACEPARENT},
    )
    run_id = created.json()["run_id"]
    for _ in range(400):
        answered = await client.post(
            f"{RUNS}/{run_id}/actions",
            json={"tool_outputs": [{"tool_call_id": "offline-call-1", "output": "sunny"}]},
            headers=auth,
        )
        if answered.status_code == 200:
            break
        await asyncio.sleep(0.02)
    run = await wait_finished(client, auth, run_id)
    spans = await asyncio.to_thread(receiver.wait_for, root_received(run_id))
    [root] = [s for s in spans if s.attributes.get("atrium.run.id") == run_id]
    mine = receiver.of_trace(root.trace_id)
    assert json.loads(str(root.attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": PROMPT}]}
    ]
    assert json.loads(str(root.attributes["gen_ai.output.messages"])) == [
        {"role": "assistant", "parts": [{"type": "text", "content": run["result"]}]}
    ]
    [tool] = by_name(mine, "execute_tool get_weather")
    assert json.loads(str(tool.attributes["gen_ai.tool.call.arguments"])) == {"city": "Paris"}
    assert tool.attributes["gen_ai.tool.call.result"] == "sunny"
    answer = by_name(mine, "chat atrium:offline")[-1]
    assert "sunny" in str(answer.attributes["gen_ai.output.messages"])
    same_spans(mine, (await trace_of(client, auth, run_id))["spans"])
