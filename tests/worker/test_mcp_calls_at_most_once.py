"""An MCP call is made at most once across a crash (docs/decisions/0040-mcp-calls-at-most-once.md).

Real `atrium serve` processes on one SQLite file and a real MCP server on loopback whose
`charge` tool counts its executions. The worker is SIGKILLed while a call is at the server (or
while the model works on its answer); a second process takes the run over. Unless the agent
declares the tool idempotent, the call is not sent again and the run fails with
TOOL_OUTCOME_UNKNOWN naming it; declared idempotent, it is sent again and the run completes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.runs.helpers import RUNS, TERMINAL
from tests.runtime.chat_server import ChatServer
from tests.worker.charging_mcp_server import ChargingMcpServer
from tests.worker.processes import AtriumProcess, Servers, process_env

PROMPT = 'call pay_charge {"amount": 5}'


@pytest.fixture
async def mcp_server() -> AsyncIterator[ChargingMcpServer]:
    async with ChargingMcpServer() as server:
        yield server


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    return process_env(
        tmp_path,
        allow_private_targets="true",  # the MCP server is on loopback
        run_lease_seconds="1.5",
        run_heartbeat_seconds="0.5",
        run_poll_seconds="0.5",
        **settings,
    )


def _pay(url: str, idempotent: bool | list[str] = False, **options: Any) -> dict[str, Any]:
    tool = {"type": "mcp", "server_label": "pay", "server_url": url, **options}
    return {**tool, "idempotent": idempotent} if idempotent else tool  # false: the default


async def _status(api: httpx.AsyncClient, run_id: str, wanted: set[str]) -> dict[str, Any]:
    run: dict[str, Any] = {}
    for _ in range(600):
        run = (await api.get(f"{RUNS}/{run_id}")).json()
        if run["status"] in wanted:
            return run
        assert run["status"] not in TERMINAL, run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run is {run.get('status')}, not one of {wanted}: {run}")


async def _start(
    servers: Servers, tools: list[dict[str, Any]], config: dict[str, Any] | None = None
) -> tuple[AtriumProcess, str]:
    first = await servers.serve("first")
    async with servers.api(first) as api:
        body = {"name": "payer", "config": {**(config or {}), "tools": tools}}
        agent = await api.post("/v1/agents", json=body)
        assert agent.status_code == 201, agent.text
        created = await api.post(
            RUNS, json={"prompt": PROMPT, "agent_id": agent.json()["agent_id"]}
        )
        assert created.status_code == 201, created.text
        return first, created.json()["run_id"]


async def _taken_over(servers: Servers, run_id: str) -> dict[str, Any]:
    """The run as it ends on a second process, which takes it over once its lease expired."""
    second = await servers.serve("second")
    async with servers.api(second, timeout=30) as api:
        done = await _status(api, run_id, TERMINAL)
        kinds = [
            e["event"]
            for e in (
                await api.get(f"{RUNS}/{run_id}/events", headers={"Accept": "application/json"})
            ).json()["data"]
        ]
    assert kinds.count("run.restarted") == 1, kinds
    return done


@pytest.mark.parametrize("idempotent", [False, True])
async def test_a_call_in_flight_when_its_worker_dies(
    tmp_path: Path, mcp_server: ChargingMcpServer, idempotent: bool
) -> None:
    with Servers(tmp_path, _env(tmp_path)) as servers:
        first, run_id = await _start(servers, [_pay(mcp_server.url, idempotent=idempotent)])
        await mcp_server.charged(1)
        first.kill()
        mcp_server.released.set()  # a call sent again answers at once
        done = await _taken_over(servers, run_id)
    if idempotent:
        assert done["status"] == "completed", done
        assert "pay_charge returned: charged 5" in done["result"]
        assert mcp_server.charges == 2
        return
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    message = done["error"]["message"]
    assert "offline-call-1 (pay_charge)" in message and "not sent again" in message, message
    assert mcp_server.charges == 1


@pytest.mark.parametrize("idempotent", [False, ["charge"]])
async def test_an_approved_call_in_flight_when_its_worker_dies(
    tmp_path: Path, mcp_server: ChargingMcpServer, idempotent: bool | list[str]
) -> None:
    tool = _pay(mcp_server.url, require_approval="always", idempotent=idempotent)
    with Servers(tmp_path, _env(tmp_path)) as servers:
        first, run_id = await _start(servers, [tool])
        async with servers.api(first) as api:
            waiting = await _status(api, run_id, {"requires_action"})
            [call] = waiting["required_action"]["tool_calls"]
            approval = {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
            answered = await api.post(f"{RUNS}/{run_id}/actions", json=approval)
            assert answered.status_code == 200, answered.text
        await mcp_server.charged(1)
        first.kill()
        mcp_server.released.set()
        done = await _taken_over(servers, run_id)
    if idempotent:
        assert done["status"] == "completed", done
        assert "pay_charge returned: charged 5" in done["result"]
        assert mcp_server.charges == 2
        return
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert f"{call['id']} (pay_charge)" in done["error"]["message"]
    assert mcp_server.charges == 1


async def test_a_call_that_answered_before_its_worker_died_is_not_made_again(
    tmp_path: Path, mcp_server: ChargingMcpServer
) -> None:
    """The call answered; the worker died during the model's next request. Its attempt's
    progress is lost: the next one would start over and make the call again."""
    mcp_server.released.set()
    async with ChatServer(
        tool_call=("pay_charge", {"amount": 5}), stall_request=2, call_id="call_pay"
    ) as chat:
        env = _env(tmp_path, llm_base_url=chat.base_url)
        with Servers(tmp_path, env) as servers:
            config = {"model": "openai-compatible:local"}
            first, run_id = await _start(servers, [_pay(mcp_server.url)], config)
            for _ in range(600):
                if len(chat.requests) >= 2:
                    break
                await asyncio.sleep(0.05)
            assert len(chat.requests) == 2 and mcp_server.charges == 1
            first.kill()
            done = await _taken_over(servers, run_id)
        assert done["status"] == "failed", done
        assert done["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
        assert "call_pay (pay_charge)" in done["error"]["message"]
        assert mcp_server.charges == 1
        assert len(chat.requests) == 2  # the run stopped before asking the model again


async def test_a_call_whose_error_went_back_to_the_model_is_not_made_again(
    tmp_path: Path, mcp_server: ChargingMcpServer
) -> None:
    """on_error "return": the call failed after charging, its error went to the model, and the
    worker died during the model's next request. A failed call may have taken effect: the
    next attempt does not make it again."""
    mcp_server.released.set()
    mcp_server.decline = "declined after charging"
    async with ChatServer(
        tool_call=("pay_charge", {"amount": 5}), stall_request=2, call_id="call_pay"
    ) as chat:
        env = _env(tmp_path, llm_base_url=chat.base_url)
        with Servers(tmp_path, env) as servers:
            config = {"model": "openai-compatible:local"}
            tool = _pay(mcp_server.url, on_error="return")
            first, run_id = await _start(servers, [tool], config)
            for _ in range(600):
                if len(chat.requests) >= 2:
                    break
                await asyncio.sleep(0.05)
            assert len(chat.requests) == 2 and mcp_server.charges == 1
            # The model's second request carries the error as the call's result.
            assert "declined after charging" in str(chat.requests[1])
            first.kill()
            done = await _taken_over(servers, run_id)
        assert done["status"] == "failed", done
        assert done["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
        message = done["error"]["message"]
        assert "call_pay (pay_charge)" in message and "not sent again" in message, message
        assert mcp_server.charges == 1
        assert len(chat.requests) == 2
