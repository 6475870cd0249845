"""Cancelling: a running run stops at its next step; finished runs are a conflict."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, read_stream, wait_finished


async def _stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "thinking"
    await asyncio.sleep(60)
    yield " never"


async def _wait_event(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, kind: str
) -> None:
    headers = {**auth, "Accept": "application/json"}
    for _ in range(1000):
        events = (await client.get(f"{RUNS}/{run_id}/events", headers=headers)).json()["data"]
        if any(event["event"] == kind for event in events):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind} event")


async def test_cancel_stops_a_running_run(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:stalls", FunctionModel(stream_function=_stalls))
    agent_id = await make_agent(model="test:stalls")
    run = await create_run(client, auth, "take forever", agent_id=agent_id)
    # The streamed text is persisted while the model is still talking.
    await _wait_event(client, auth, run["run_id"], "message.delta")

    response = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert response.status_code == 200
    assert response.json()["status"] in {"running", "cancelled"}
    done = await asyncio.wait_for(wait_finished(client, auth, run["run_id"]), 10)
    assert done["status"] == "cancelled"
    assert "result" not in done and "error" not in done
    assert done["billing"]["tool_calls"] == 0
    frames = await read_stream(client, auth, run["run_id"])
    assert frames[-1]["event"] == "run.cancelled"
    # Text streamed before the cancel was persisted and delivered.
    assert "thinking" in [f["data"].get("text") for f in frames if f["event"] == "message.delta"]
    again = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "CONFLICT"

    usage = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (usage["runs"], usage["cancelled"], usage["completed"]) == (1, 1, 0)


async def test_cancel_a_completed_run_is_409(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    response = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert response.status_code == 409
    assert response.json()["error"]["details"]["status"] == "completed"
