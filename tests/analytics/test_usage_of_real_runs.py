"""Runs executed by the worker are counted exactly: the report equals a recount of the runs."""

from __future__ import annotations

import asyncio
import datetime
from typing import Any

import httpx
from fastapi import FastAPI
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry

RUNS = "/api/v1/public/agent/runs"
TERMINAL = {"completed", "failed", "cancelled"}


def _broken(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    raise RuntimeError("the provider is down")


async def _finished(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> dict[str, Any]:
    for _ in range(2_000):
        run: dict[str, Any] = (await client.get(f"{RUNS}/{run_id}", headers=auth)).json()
        if run["status"] in TERMINAL:
            return run
        await asyncio.sleep(0.01)
    raise AssertionError(f"run {run_id} did not finish")


async def test_finished_runs_are_counted_exactly(
    app: FastAPI, client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    registry: ModelRegistry = app.state.workers.runtime.models
    registry.register("test:broken", FunctionModel(_broken))
    named = (await client.post("/v1/agents", json={"name": "Named"}, headers=auth)).json()
    broken = (
        await client.post(
            "/v1/agents", json={"name": "Broken", "config": {"model": "test:broken"}}, headers=auth
        )
    ).json()
    bodies = [
        {"prompt": "one"},
        {"prompt": "two, a little longer than the first"},
        {"prompt": "three", "agent_id": named["agent_id"]},
        {"prompt": "four", "agent_id": named["agent_id"]},
        {"prompt": "five", "agent_id": broken["agent_id"]},
    ]
    created = [(await client.post(RUNS, json=body, headers=auth)).json() for body in bodies]
    runs = [await _finished(client, auth, run["run_id"]) for run in created]
    assert sorted(run["status"] for run in runs) == ["completed"] * 4 + ["failed"]

    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    report = (await client.get("/v1/analytics/usage", headers=auth)).json()

    def recount(selected: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "runs": len(selected),
            **{s: sum(r["status"] == s for r in selected) for s in sorted(TERMINAL)},
            "input_tokens": sum(r["billing"]["input_tokens"] for r in selected),
            "output_tokens": sum(r["billing"]["output_tokens"] for r in selected),
            "credits_micro": sum(round(r["billing"]["credits"] * 1e6) for r in selected),
            "requests": sum(r["billing"]["requests"] for r in selected),
            "requires_action": 0,  # none of these runs waited for its caller
        }

    def shown(counters: dict[str, Any]) -> dict[str, Any]:
        values = {
            k: v for k, v in counters.items() if k not in {"credits", "date", "agent_id", "name"}
        }
        return {**values, "credits_micro": round(counters["credits"] * 1e6)}

    assert all(run["finished_at"].startswith(today) for run in runs)
    assert shown(report["totals"]) == recount(runs)
    assert report["totals"]["input_tokens"] > 0
    assert shown(report["daily"][-1]) == recount(runs)
    by_agent = {row["agent_id"]: shown(row) for row in report["agents"]}
    for agent_id in {run["agent_id"] for run in runs}:
        assert by_agent[agent_id] == recount([r for r in runs if r["agent_id"] == agent_id])
    # Runs that named no agent went to the default agent, now an ordinary, listed agent.
    default_id = runs[0]["agent_id"]
    assert default_id not in {named["agent_id"], broken["agent_id"]}
    listed = (await client.get("/v1/agents", headers=auth)).json()["data"]
    assert default_id in [agent["agent_id"] for agent in listed]
