"""Runs' spans at a real OTLP/HTTP receiver: a run with an MCP tool, a function tool and a wait
continues its caller's trace, with the GenAI conventions' names, parents and attributes, the
spans before the wait sent at the wait and the rest at the end, once each, the same as the
trace endpoint shows, and no prompt or output in them (ATRIUM_TRACE_CONTENT is off)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.conftest import KeyFactory, bearer
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.runtime.mcp_server import McpTestServer
from tests.traces.helpers import (
    CALLER_SPAN,
    CALLER_TRACE,
    CONTENT_KEYS,
    TRACEPARENT,
    by_name,
    root_received,
    same_spans,
    trace_of,
)
from tests.traces.otlp_receiver import OtlpReceiver

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
PROMPT = 'Weather?\ncall docs_echo {"text": "hello"}\ncall get_weather {"city": "Paris"}'
INTERNAL, CLIENT = 1, 3
ERROR = 2


@pytest.fixture
def settings_overrides(receiver: OtlpReceiver) -> dict[str, object]:
    return {
        "otlp_endpoint": receiver.endpoint,
        "allow_private_targets": True,  # the MCP server is on loopback
        "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
    }


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


async def _waiting(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> None:
    for _ in range(400):
        run = (await client.get(f"{RUNS}/{run_id}", headers=auth)).json()
        if run["status"] == "requires_action":
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"run still {run['status']}")


def _nanos(iso: str) -> int:
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1_000


async def test_a_run_with_tools_and_a_wait_continues_the_callers_trace(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
    receiver: OtlpReceiver,
) -> None:
    agent_id = await make_agent(
        tools=[WEATHER, {"type": "mcp", "server_label": "docs", "server_url": mcp_server.url}]
    )
    created = await client.post(
        RUNS,
        json={"prompt": PROMPT, "agent_id": agent_id},
        headers={**auth, "traceparent": TRACEPARENT},
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]
    await _waiting(client, auth, run_id)

    # At the wait: the stretch of execution that ended, its two model requests and the MCP call;
    # not the run, the wait, nor the function call the caller has yet to answer.
    at_wait = await asyncio.to_thread(
        receiver.wait_for, lambda spans: any(s.name == "execute" for s in spans)
    )
    names = sorted(s.name for s in at_wait if s.trace_id == CALLER_TRACE)
    assert names == ["chat atrium:offline"] * 2 + ["execute", "execute_tool echo"]

    answered = await client.post(
        f"{RUNS}/{run_id}/actions",
        json={"tool_outputs": [{"tool_call_id": "offline-call-2", "output": "sunny"}]},
        headers=auth,
    )
    assert answered.status_code == 200, answered.text
    run = await wait_finished(client, auth, run_id)
    assert run["status"] == "completed"
    await asyncio.to_thread(receiver.wait_for, root_received(run_id))
    spans = receiver.of_trace(CALLER_TRACE)

    [root] = by_name(spans, f"invoke_agent {agent_id}")
    first, second = by_name(spans, "execute")
    chats = by_name(spans, "chat atrium:offline")
    [echo] = by_name(spans, "execute_tool echo")
    [weather] = by_name(spans, "execute_tool get_weather")
    [wait] = by_name(spans, "wait")
    assert len(spans) == 9
    # The caller's span is the run's parent; everything else hangs under the run.
    assert (root.trace_id, root.parent_span_id) == (CALLER_TRACE, CALLER_SPAN)
    assert {first.parent_span_id, second.parent_span_id, wait.parent_span_id} == {root.span_id}
    assert [c.parent_span_id for c in chats] == [first.span_id] * 2 + [second.span_id]
    assert echo.parent_span_id == weather.parent_span_id == first.span_id
    # The function call is open across the wait, which ends when the answer queues the run.
    assert weather.start_ns < wait.start_ns < wait.end_ns < weather.end_ns < second.end_ns
    assert first.end_ns == wait.start_ns and root.end_ns == second.end_ns
    assert root.start_ns == _nanos(run["created_at"])
    # Each span's times are its events' (the run ends with its terminal event).
    events = (
        await client.get(f"{RUNS}/{run_id}/events", headers={**auth, "Accept": "application/json"})
    ).json()["data"]
    times = {(e["event"], e["data"].get("step")): _nanos(e["data"]["created_at"]) for e in events}
    assert root.end_ns == times[("run.completed", None)]
    assert wait.start_ns == times[("run.requires_action", None)]

    assert root.kind == INTERNAL and {c.kind for c in chats} == {CLIENT}
    assert root.status_code == 1 and root.service_name == "atrium"
    billing = run["billing"]
    assert root.attributes == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.id": agent_id,
        "gen_ai.agent.name": "test agent",
        "gen_ai.agent.version": "1",
        "gen_ai.provider.name": "atrium",
        "gen_ai.request.model": "atrium:offline",
        "gen_ai.conversation.id": run["thread_id"],
        "gen_ai.usage.input_tokens": billing["input_tokens"],
        "gen_ai.usage.output_tokens": billing["output_tokens"],
        "atrium.run.id": run_id,
        "atrium.run.status": "completed",
        "atrium.run.attempts": 1,
        "atrium.run.requests": 3,
        "atrium.run.tool_calls": 2,
        "atrium.credits": billing["credits"],
    }
    assert chats[0].attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "atrium",
        "gen_ai.request.model": "atrium:offline",
        "gen_ai.response.model": "atrium:offline",
        "gen_ai.usage.input_tokens": chats[0].attributes["gen_ai.usage.input_tokens"],
        "gen_ai.usage.output_tokens": chats[0].attributes["gen_ai.usage.output_tokens"],
        "atrium.request.index": 1,
    }
    # Each request's own tokens, which add up to the run's.
    for direction in ("input", "output"):
        key = f"gen_ai.usage.{direction}_tokens"
        assert all(int(c.attributes[key]) > 0 for c in chats)
        assert sum(int(c.attributes[key]) for c in chats) == billing[f"{direction}_tokens"]
    assert echo.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "echo",
        "gen_ai.tool.call.id": "offline-call-1",
        "gen_ai.tool.type": "extension",
        "atrium.tool.server_label": "docs",
    }
    assert weather.attributes["gen_ai.tool.type"] == "function"
    assert wait.attributes == {
        "atrium.wait.tool_calls": 1,
        "atrium.wait.tools": "get_weather",
        "atrium.wait.outcome": "answered",
    }
    assert not any(CONTENT_KEYS & span.attributes.keys() for span in spans)
    assert "hello" not in repr(spans) and "sunny" not in repr(spans)
    # Built by the same code from the same events: the endpoint shows what the collector got.
    shown = await trace_of(client, auth, run_id)
    assert shown["trace_id"] == CALLER_TRACE
    same_spans(spans, shown["spans"])
    assert all(t.startswith("application/x-protobuf") for t in receiver.content_types)


@pytest.mark.parametrize(
    "header",
    [
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  # zero parent id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # version ff
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  # upper case
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  # v00 with more
        "garbage",
    ],
)
async def test_an_invalid_traceparent_is_ignored_and_the_run_starts_its_own_trace(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: OtlpReceiver, header: str
) -> None:
    created = await client.post(
        RUNS, json={"prompt": "Say hello"}, headers={**auth, "traceparent": header}
    )
    assert created.status_code == 201, created.text
    run_id = created.json()["run_id"]
    await wait_finished(client, auth, run_id)
    spans = await asyncio.to_thread(receiver.wait_for, root_received(run_id))
    [root] = [s for s in spans if s.attributes.get("atrium.run.id") == run_id]
    assert root.trace_id != CALLER_TRACE and root.parent_span_id == ""
    mine = receiver.of_trace(root.trace_id)
    assert {s.name for s in mine} >= {"execute", "chat atrium:offline"}
    same_spans(mine, (await trace_of(client, auth, run_id))["spans"])


async def test_a_later_version_of_traceparent_is_read_as_version_00(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: OtlpReceiver
) -> None:
    header = f"01-{CALLER_TRACE}-{CALLER_SPAN}-01-more-fields"
    run = await create_run(client, auth, "Say hi")
    created = await client.post(
        RUNS,
        json={"prompt": "Say hello", "thread_id": run["thread_id"]},
        headers={**auth, "traceparent": header},
    )
    run_id = created.json()["run_id"]
    await wait_finished(client, auth, run_id)
    shown = await trace_of(client, auth, run_id)
    assert shown["trace_id"] == CALLER_TRACE
    assert shown["spans"][0]["parent_span_id"] == CALLER_SPAN


async def test_the_trace_of_an_unknown_or_anothers_run_is_a_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    run = await create_run(client, auth)
    other: IssuedKey = await make_key("other")
    for run_id, headers in (("run_nope", auth), (run["run_id"], bearer(other.key))):
        response = await client.get(f"{RUNS}/{run_id}/trace", headers=headers)
        assert response.status_code == 404
        error = response.json()["error"]
        assert error["code"] == "NOT_FOUND" and error["details"] == {"parameter": "run_id"}


async def test_a_queued_run_shows_its_open_span(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    shown = await trace_of(client, auth, run["run_id"])
    assert shown["spans"][0]["name"].startswith("invoke_agent ")
    await wait_finished(client, auth, run["run_id"])


async def test_spans_the_collector_refused_are_sent_again(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: OtlpReceiver
) -> None:
    receiver.refused = 0
    receiver.refuse = 2
    run = await create_run(client, auth, "Say hello")
    await wait_finished(client, auth, run["run_id"])
    spans = await asyncio.to_thread(receiver.wait_for, root_received(run["run_id"]))
    assert receiver.refused == 2
    [root] = [s for s in spans if s.attributes.get("atrium.run.id") == run["run_id"]]
    same_spans(
        receiver.of_trace(root.trace_id), (await trace_of(client, auth, run["run_id"]))["spans"]
    )
