"""Runs that call a real MCP server (fastmcp on loopback): calls, results, events, billing, and
the failures that end a run with TOOL_ERROR within the timeouts."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.test import TestModel

from atrium.kit.json_depth import MAX_JSON_DEPTH, TOO_DEEP
from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.runtime.mcp_server import McpTestServer, silent_server

SECRET = "Bearer tok-zebra-quartz-5521"
CONNECT_TIMEOUT = 1.5
CALL_TIMEOUT = 1.5


SETTINGS: dict[str, object] = {
    # The MCP servers of these tests are on loopback.
    "allow_private_targets": True,
    # PostgreSQL deployments need a key to store headers (SQLite makes a key file).
    "secrets_key": "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU=",
}


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    """The default MCP timeouts (10 s to connect and list, 60 s a call): a run on a loaded
    machine (the whole suite on 2 cores) may take over a second to connect. The tests of a
    timeout shorten the one they test."""
    return SETTINGS


SHORT_CONNECT = pytest.mark.parametrize(
    "settings_overrides",
    [{**SETTINGS, "mcp_connect_timeout_seconds": CONNECT_TIMEOUT}],
    ids=["short-connect"],
)
SHORT_CALL = pytest.mark.parametrize(
    "settings_overrides",
    [{**SETTINGS, "mcp_call_timeout_seconds": CALL_TIMEOUT}],
    ids=["short-call"],
)


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


def mcp_tool(url: str, label: str = "docs", **extra: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": label, "server_url": url, **extra}


Move = str | tuple[str, dict[str, Any]]


def scripted(plan: Callable[[list[ModelMessage], AgentInfo], Move]) -> FunctionModel:
    """A streaming FunctionModel whose `plan` answers text or a `(tool, arguments)` call."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        move = plan(messages, info)
        if isinstance(move, str):
            yield move
        else:
            yield {0: DeltaToolCall(name=move[0], json_args=json.dumps(move[1]))}

    return FunctionModel(stream_function=stream)


async def events_of(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> list[Any]:
    response = await client.get(
        f"{RUNS}/{run_id}/events", headers={**auth, "Accept": "application/json"}
    )
    assert response.status_code == 200
    data: list[Any] = response.json()["data"]
    return data


async def test_the_offline_script_calls_mcp_tools_and_quotes_their_output(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    server = mcp_tool(mcp_server.url, headers={"Authorization": SECRET})
    agent_id = await make_agent(tools=["list_artifacts", server])
    prompt = 'Look things up.\ncall docs_echo {"text": "hi there"}\ncall docs_add {"a": 2, "b": 40}'
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done

    # The calls reached the server, in order, with their arguments and the agent's header.
    assert [(c.name, c.arguments) for c in mcp_server.seen.calls] == [
        ("echo", {"text": "hi there"}),
        ("add", {"a": 2, "b": 40}),
    ]
    assert all(c.headers.get("authorization") == SECRET for c in mcp_server.seen.calls)
    # Their results reached the model: the offline answer quotes each.
    assert "docs_echo returned: echo: hi there" in done["result"]
    assert "docs_add returned: 42" in done["result"]
    assert done["billing"]["tool_calls"] == 2
    assert done["billing"]["requests"] == 3

    events = await events_of(client, auth, run["run_id"])
    called = [e["data"] for e in events if e["event"] == "tool.called"]
    returned = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert [(c["name"], c["server_label"], c["arguments"]) for c in called] == [
        ("echo", "docs", {"text": "hi there"}),
        ("add", "docs", {"a": 2, "b": 40}),
    ]
    assert [(r["name"], r["server_label"], r["output"], r["is_error"]) for r in returned] == [
        ("echo", "docs", "echo: hi there", False),
        ("add", "docs", "42", False),
    ]
    assert [c["tool_call_id"] for c in called] == [r["tool_call_id"] for r in returned]
    assert SECRET not in json.dumps(events) and SECRET not in json.dumps(done)


async def test_built_in_tool_calls_are_events_and_billed_too(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=["write_artifact", "read_artifact"])
    prompt = (
        'call write_artifact {"name": "a.txt", "content": "alpha"}\n'
        'call read_artifact {"name": "a.txt"}\n'
        'call read_artifact {"name": "missing.txt"}'
    )
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert "read_artifact returned: alpha" in done["result"]
    # A call that asks the model to retry is a call too, and shows as an error.
    assert "read_artifact failed: no artifact named 'missing.txt'" in done["result"]
    assert done["billing"]["tool_calls"] == 3
    events = await events_of(client, auth, run["run_id"])
    called = [e["data"] for e in events if e["event"] == "tool.called"]
    returned = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert [(c["name"], c["server_label"]) for c in called] == [
        ("write_artifact", None),
        ("read_artifact", None),
        ("read_artifact", None),
    ]
    assert [(r["server_label"], r["is_error"]) for r in returned] == [
        (None, False),
        (None, False),
        (None, True),
    ]
    assert returned[1]["output"] == "alpha"


async def test_allowed_tools_hides_the_others_from_the_model(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    mcp_server: McpTestServer,
) -> None:
    offered: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> Move:
        offered.append(sorted(tool.name for tool in info.function_tools))
        return "done"

    models.register("test:lists-tools", scripted(answer))
    server = mcp_tool(mcp_server.url, allowed_tools=["echo", "add"])
    agent_id = await make_agent(model="test:lists-tools", tools=["read_artifact", server])
    done = await wait_finished(
        client, auth, (await create_run(client, auth, "x", agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done
    assert offered == [["docs_add", "docs_echo", "read_artifact"]]


async def test_test_model_calls_an_mcp_tool(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    mcp_server: McpTestServer,
) -> None:
    models.register("test:mcp", TestModel(call_tools=["docs_echo"]))
    agent_id = await make_agent(model="test:mcp", tools=[mcp_tool(mcp_server.url)])
    done = await wait_finished(
        client, auth, (await create_run(client, auth, "x", agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done
    [call] = mcp_server.seen.calls
    assert call.name == "echo" and set(call.arguments) == {"text"}
    assert f"echo: {call.arguments['text']}" in done["result"]  # TestModel reports the return
    assert done["billing"]["tool_calls"] == 1


async def test_a_tool_result_reaches_the_model(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    mcp_server: McpTestServer,
) -> None:
    def sum_then_report(messages: list[ModelMessage], info: AgentInfo) -> Move:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ("docs_add", {"a": 19, "b": 23})
        return f"the server says {returns[0].content}"

    models.register("test:adder", scripted(sum_then_report))
    agent_id = await make_agent(model="test:adder", tools=[mcp_tool(mcp_server.url)])
    done = await wait_finished(
        client, auth, (await create_run(client, auth, "add", agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done
    assert done["result"] == "the server says 42"
    assert [(c.name, c.arguments) for c in mcp_server.seen.calls] == [("add", {"a": 19, "b": 23})]


async def _failed_run(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, prompt: str
) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"], within=30)
    return done, time.monotonic() - started


@SHORT_CONNECT
async def test_a_server_that_is_down_fails_the_run_with_tool_error(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    async with McpTestServer() as stopped:
        url = stopped.url  # a port that nothing listens on once the block ends
    agent_id = await make_agent(tools=[mcp_tool(url)])
    done, took = await _failed_run(client, auth, agent_id, 'call docs_echo {"text": "x"}')
    assert done["status"] == "failed"
    assert done["error"]["code"] == "TOOL_ERROR"
    assert "MCP server docs" in done["error"]["message"]
    assert "could not be reached" in done["error"]["message"]
    assert took < CONNECT_TIMEOUT + 5


@SHORT_CONNECT
async def test_a_server_that_never_answers_fails_the_run_within_the_connect_timeout(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    async with silent_server() as url:
        agent_id = await make_agent(tools=[mcp_tool(url)])
        done, took = await _failed_run(client, auth, agent_id, 'call docs_echo {"text": "x"}')
    assert done["error"]["code"] == "TOOL_ERROR", done
    assert f"did not connect within {CONNECT_TIMEOUT:g} s" in done["error"]["message"]
    # The connect timeout, plus the MCP client's bounded clean-up of the abandoned connection.
    assert CONNECT_TIMEOUT <= took < CONNECT_TIMEOUT + 8


@SHORT_CALL
async def test_a_slow_tool_fails_the_run_within_the_call_timeout(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(mcp_server.url)])
    done, took = await _failed_run(client, auth, agent_id, 'call docs_sleep {"seconds": 30}')
    assert done["error"] == {
        "code": "TOOL_ERROR",
        "message": f"docs_sleep (MCP) did not answer within {CALL_TIMEOUT:g} s",
    }
    assert CALL_TIMEOUT <= took < CALL_TIMEOUT + 8
    assert done["billing"]["tool_calls"] == 1
    events = await events_of(client, auth, done["run_id"])
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert returned["is_error"] is True and returned["name"] == "sleep"
    assert events[-1]["event"] == "run.failed"


async def test_a_tool_error_fails_the_run_with_its_message(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(mcp_server.url)])
    done, _ = await _failed_run(
        client, auth, agent_id, 'call docs_fail {"message": "the index is gone"}'
    )
    assert done["error"]["code"] == "TOOL_ERROR"
    assert done["error"]["message"].startswith("docs_fail (MCP) failed: ")
    assert "the index is gone" in done["error"]["message"]
    events = await events_of(client, auth, done["run_id"])
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert returned["is_error"] is True and "the index is gone" in returned["output"]


async def test_a_long_output_is_cut_to_4_kb_in_its_event(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(mcp_server.url)])
    text = "é" * 6_000  # 12,000 bytes of UTF-8
    run = await create_run(
        client,
        auth,
        f"call docs_echo {json.dumps({'text': text}, ensure_ascii=False)}",
        agent_id=agent_id,
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    events = await events_of(client, auth, run["run_id"])
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert len(returned["output"].encode()) <= 4096
    assert returned["output"].startswith("echo: éé") and returned["output"].endswith("[truncated]")


async def test_names_that_collide_once_prefixed_fail_the_run_clearly(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    # Label `a` + tool `b_c` and label `a_b` + tool `c` are both `a_b_c` to the model.
    tools = [mcp_tool(mcp_server.url, label="a"), mcp_tool(mcp_server.url, label="a_b")]
    agent_id = await make_agent(tools=tools)
    done, _ = await _failed_run(client, auth, agent_id, "x")
    assert done["error"]["code"] == "TOOL_ERROR"
    assert "'a_b_c'" in done["error"]["message"]


@pytest.mark.parametrize("cache_seconds, lists", [(60.0, 1), (0.0, 2)])
@pytest.mark.fresh_app  # sets the cache of its app
async def test_a_tool_list_is_reused_by_later_runs_for_a_while(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    app: Any,
    mcp_server: McpTestServer,
    cache_seconds: float,
    lists: int,
) -> None:
    app.state.workers.runtime.mcp.lists.seconds = cache_seconds
    agent_id = await make_agent(tools=[mcp_tool(mcp_server.url, headers={"X-Tenant": "t1"})])
    for _ in range(2):
        run = await create_run(client, auth, 'call docs_echo {"text": "x"}', agent_id=agent_id)
        done = await wait_finished(client, auth, run["run_id"])
        # The run's error in the message: this failed twice under load, cause not yet known.
        assert done["status"] == "completed", done.get("error")
    assert mcp_server.seen.lists == lists
    assert len(mcp_server.seen.calls) == 2


async def test_function_tools_are_offered_to_the_model_with_their_schema(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    offered: list[list[tuple[str, str | None]]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> Move:
        offered.append([(tool.name, tool.description) for tool in info.function_tools])
        return "done"

    models.register("test:offered", scripted(answer))
    lookup = {"type": "function", "name": "lookup", "description": "Look it up."}
    agent_id = await make_agent(model="test:offered", tools=["list_artifacts", lookup])
    done = await wait_finished(
        client, auth, (await create_run(client, auth, "x", agent_id=agent_id))["run_id"]
    )
    # Not called: the run never waits, and completes as any run does.
    assert done["status"] == "completed", done
    [tools] = offered
    assert ("lookup", "Look it up.") in tools
    assert [name for name, _ in tools] == ["list_artifacts", "lookup"]


async def test_header_values_reach_no_log_event_or_response(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server = mcp_tool(mcp_server.url, headers={"Authorization": SECRET})
    agent_id = await make_agent(tools=[server])
    shown = (await client.get(f"/v1/agents/{agent_id}", headers=auth)).json()
    ok = await create_run(client, auth, 'call docs_echo {"text": "x"}', agent_id=agent_id)
    bad = await create_run(client, auth, 'call docs_fail {"message": "no"}', agent_id=agent_id)
    runs = [await wait_finished(client, auth, r["run_id"]) for r in (ok, bad)]
    assert [r["status"] for r in runs] == ["completed", "failed"]
    assert mcp_server.seen.calls[0].headers["authorization"] == SECRET  # it was sent
    events = [await events_of(client, auth, r["run_id"]) for r in runs]
    logged = "\n".join(
        f"{record.getMessage()} {record.exc_text or ''} {record.args}" for record in caplog.records
    )
    assert logged  # the capture did see the run's logs
    for text in (logged, json.dumps(shown), json.dumps(runs), json.dumps(events)):
        assert SECRET not in text
        assert "zebra-quartz" not in text


async def test_a_result_nested_too_deep_fails_the_run_with_tool_error(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(mcp_server.url)])
    deepest = f'call docs_nested {{"depth": {MAX_JSON_DEPTH}}}'
    done = await wait_finished(
        client, auth, (await create_run(client, auth, deepest, agent_id=agent_id))["run_id"]
    )
    assert done["status"] == "completed", done
    done, _ = await _failed_run(
        client, auth, agent_id, f'call docs_nested {{"depth": {MAX_JSON_DEPTH + 1}}}'
    )
    assert done["error"] == {
        "code": "TOOL_ERROR",
        "message": f"docs_nested (MCP) answered JSON that {TOO_DEEP}",
    }
    events = await events_of(client, auth, done["run_id"])
    [returned] = [e["data"] for e in events if e["event"] == "tool.returned"]
    assert (returned["name"], returned["is_error"]) == ("nested", True)
    listed = await client.get(RUNS, headers=auth)
    assert listed.status_code == 200, listed.text
