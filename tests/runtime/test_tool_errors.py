"""`on_error` of MCP servers and function tools (docs/decisions/0049-tool-errors-to-the-model.md):
with "return" a failed call goes back to the model and the run goes on; with "fail" (the
default) it ends the run with TOOL_ERROR; more failures of one tool in a row than
`max_consecutive_errors` end it with TOOL_ERROR_LIMIT. Through HTTP, against a real MCP server
on loopback (its `flaky` tool fails a given number of times, then answers) and the offline
model, which quotes what each call returned or how it failed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.mcp_server import McpTestServer


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"allow_private_targets": True}  # the MCP server is on loopback


@pytest.fixture
async def mcp_server() -> AsyncIterator[McpTestServer]:
    async with McpTestServer() as server:
        yield server


def docs(url: str, **options: Any) -> dict[str, Any]:
    return {"type": "mcp", "server_label": "docs", "server_url": url, **options}


def calls(line: str, times: int) -> str:
    return "\n".join([line] * times)


FLAKY = 'call docs_flaky {"key": "index", "failures": 2}'
BUSY = "docs_flaky (MCP) failed: index is busy (call {n}), try again"


async def _returned(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> list[Any]:
    return [
        (e["data"]["name"], e["data"]["output"], e["data"]["is_error"])
        for e in await events_of(client, auth, run_id)
        if e["event"] == "tool.returned"
    ]


async def test_with_return_a_flaky_tool_fails_then_the_run_completes(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[docs(mcp_server.url, on_error="return")])
    run = await create_run(client, auth, calls(FLAKY, 3), agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    # The model read both errors, then the answer.
    assert done["result"].splitlines()[1:] == [
        f"docs_flaky failed: {BUSY.format(n=1)}",
        f"docs_flaky failed: {BUSY.format(n=2)}",
        "docs_flaky returned: index ready after 2 failures",
    ]
    assert await _returned(client, auth, run["run_id"]) == [
        ("flaky", BUSY.format(n=1), True),
        ("flaky", BUSY.format(n=2), True),
        ("flaky", "index ready after 2 failures", False),
    ]
    assert len(mcp_server.seen.calls) == 3
    assert done["billing"]["tool_calls"] == 3  # failed calls are calls
    assert done["billing"]["requests"] == 4


async def test_with_fail_the_first_error_ends_the_run(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    agent_id = await make_agent(tools=[docs(mcp_server.url)])  # on_error "fail": the default
    run = await create_run(client, auth, calls(FLAKY, 3), agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"] == {"code": "TOOL_ERROR", "message": BUSY.format(n=1)}
    assert len(mcp_server.seen.calls) == 1
    assert await _returned(client, auth, run["run_id"]) == [("flaky", BUSY.format(n=1), True)]


@pytest.mark.parametrize(("limit", "completes"), [(2, True), (1, False)])
async def test_more_errors_in_a_row_than_the_limit_end_the_run(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
    limit: int,
    completes: bool,
) -> None:
    tool = docs(mcp_server.url, on_error="return", max_consecutive_errors=limit)
    agent_id = await make_agent(tools=[tool])
    run = await create_run(client, auth, calls(FLAKY, 3), agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    if completes:  # two errors in a row go back: the third call answers
        assert done["status"] == "completed", done
        return
    assert done["status"] == "failed", done
    assert done["error"] == {
        "code": "TOOL_ERROR_LIMIT",
        "message": "docs_flaky failed 2 times in a row, more than its max_consecutive_errors "
        f"(1); the last error: {BUSY.format(n=2)}",
    }
    assert len(mcp_server.seen.calls) == 2  # the run ended without asking the model again
    assert done["billing"]["requests"] == 2


async def test_a_success_of_the_tool_starts_the_count_again_other_tools_do_not(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    tool = docs(mcp_server.url, on_error="return", max_consecutive_errors=1)
    agent_id = await make_agent(tools=[tool])
    prompt = "\n".join(
        [
            'call docs_flaky {"key": "a", "failures": 1}',
            'call docs_flaky {"key": "a", "failures": 1}',  # answers: the count starts again
            'call docs_flaky {"key": "b", "failures": 2}',
            'call docs_echo {"text": "between"}',  # another tool: does not
            'call docs_flaky {"key": "b", "failures": 2}',
        ]
    )
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR_LIMIT"
    assert done["error"]["message"].startswith("docs_flaky failed 2 times in a row")
    assert [c.name for c in mcp_server.seen.calls] == ["flaky", "flaky", "flaky", "echo", "flaky"]


async def test_an_approved_call_that_fails_goes_back_and_the_count_spans_the_wait(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    """The run waits between two failures of `docs_fail`: the count goes on from the run's
    messages, so the second failure is over the limit of one."""
    tool = docs(
        mcp_server.url,
        on_error="return",
        max_consecutive_errors=1,
        require_approval={"always": ["echo"]},
    )
    agent_id = await make_agent(tools=[tool])
    prompt = (
        'call docs_fail {"message": "first"}\n'
        'call docs_echo {"text": "approve me"}\n'
        'call docs_fail {"message": "second"}'
    )
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    approval = {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
    assert (await act(client, auth, run["run_id"], approval)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR_LIMIT"
    assert done["error"]["message"].endswith("docs_fail (MCP) failed: second")
    assert [c.name for c in mcp_server.seen.calls] == ["fail", "echo", "fail"]


async def test_an_approved_call_that_fails_goes_back_to_the_model(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    mcp_server: McpTestServer,
) -> None:
    tool = docs(mcp_server.url, on_error="return", require_approval="always")
    agent_id = await make_agent(tools=[tool])
    run = await create_run(
        client, auth, 'call docs_fail {"message": "no index"}', agent_id=agent_id
    )
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    approval = {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
    assert (await act(client, auth, run["run_id"], approval)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert "docs_fail failed: docs_fail (MCP) failed: no index" in done["result"]
    assert await _returned(client, auth, run["run_id"]) == [
        ("fail", "docs_fail (MCP) failed: no index", True)
    ]


def _lookup(**options: Any) -> dict[str, Any]:
    return {**LOOKUP, **options}


async def _answer_failed(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, text: str
) -> None:
    waiting = await wait_status(client, auth, run_id, "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    output = {"tool_call_id": call["id"], "output": text, "is_error": True}
    response = await act(client, auth, run_id, {"tool_outputs": [output]})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("on_error", ["return", "fail"])
async def test_a_function_output_marked_is_error(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, on_error: str
) -> None:
    agent_id = await make_agent(tools=[_lookup(on_error=on_error)])
    run = await create_run(client, auth, 'call lookup {"word": "atrium"}', agent_id=agent_id)
    await _answer_failed(client, auth, run["run_id"], "KeyError: 'atrium'")
    done = await wait_finished(client, auth, run["run_id"])
    assert await _returned(client, auth, run["run_id"]) == [("lookup", "KeyError: 'atrium'", True)]
    if on_error == "return":
        assert done["status"] == "completed", done
        assert "lookup failed: KeyError: 'atrium'" in done["result"]
        return
    assert done["status"] == "failed", done
    assert done["error"] == {"code": "TOOL_ERROR", "message": "lookup failed: KeyError: 'atrium'"}


async def test_a_function_failing_at_every_answer_ends_the_run_at_its_limit(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    """Each failure is a wait of its own: the count goes on across them."""
    agent_id = await make_agent(tools=[_lookup(on_error="return", max_consecutive_errors=2)])
    run = await create_run(client, auth, calls('call lookup {"word": "x"}', 4), agent_id=agent_id)
    for attempt in (1, 2, 3):
        await _answer_failed(client, auth, run["run_id"], f"down ({attempt})")
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"] == {
        "code": "TOOL_ERROR_LIMIT",
        "message": "lookup failed 3 times in a row, more than its max_consecutive_errors (2); "
        "the last error: lookup failed: down (3)",
    }


async def test_a_plain_output_is_no_error(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[_lookup()])
    run = await create_run(client, auth, 'call lookup {"word": "x"}', agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    body = {"tool_outputs": [{"tool_call_id": call["id"], "output": "error: not really"}]}
    assert (await act(client, auth, run["run_id"], body)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert "lookup returned: error: not really" in done["result"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("on_error", "retry", "tools[0].on_error Input should be 'fail' or 'return'"),
        ("on_error", None, "tools[0].on_error Input should be 'fail' or 'return'"),
        ("max_consecutive_errors", 0, "tools[0].max_consecutive_errors Input should be greater"),
        ("max_consecutive_errors", 101, "tools[0].max_consecutive_errors Input should be less"),
        ("max_consecutive_errors", "3", "tools[0].max_consecutive_errors Input should be a valid"),
        ("max_consecutive_errors", 2.5, "tools[0].max_consecutive_errors Input should be a valid"),
    ],
)
@pytest.mark.parametrize("kind", ["mcp", "function"])
async def test_a_wrong_value_is_a_400_naming_the_field(
    client: httpx.AsyncClient, auth: dict[str, str], kind: str, field: str, value: Any, message: str
) -> None:
    base = docs("http://127.0.0.1:9/mcp") if kind == "mcp" else _lookup()
    body = {"name": "wrong", "config": {"tools": [{**base, field: value}]}}
    response = await client.post("/v1/agents", json=body, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"] == {"parameter": "config.tools"}
    assert error["message"].startswith(f"config.tools: {message}"), error["message"]
    listed = await client.get("/v1/agents", headers=auth)
    assert listed.json()["data"] == []  # nothing saved


async def test_the_agent_shows_the_defaults_and_takes_a_whole_number_as_float(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    tools = [docs("http://127.0.0.1:9/mcp"), _lookup(on_error="return", max_consecutive_errors=5.0)]
    agent_id = await make_agent(tools=tools)
    shown = (await client.get(f"/v1/agents/{agent_id}", headers=auth)).json()["config"]["tools"]
    assert [(t["on_error"], t["max_consecutive_errors"]) for t in shown] == [
        ("fail", 3),
        ("return", 5),
    ]


async def test_is_error_must_be_a_boolean(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[_lookup(on_error="return")])
    run = await create_run(client, auth, 'call lookup {"word": "x"}', agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    output = {"tool_call_id": call["id"], "output": "x", "is_error": "yes"}
    response = await act(client, auth, run["run_id"], {"tool_outputs": [output]})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["parameter"].startswith("tool_outputs")
    assert (await client.get(f"/api/v1/public/agent/runs/{run['run_id']}", headers=auth)).json()[
        "status"
    ] == "requires_action"
