"""Evals store results of runs made on the offline model; no provider is needed."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx

from tests.runs.helpers import wait_finished

AGENTS = "/v1/agents"
RUNS = "/api/v1/public/agent/runs"
EVALS = "/v1/evals"
SHA = hashlib.sha256(b"dataset").hexdigest()


async def new_agent(client: httpx.AsyncClient, auth: dict[str, str], instructions: str) -> str:
    body = {"name": "Evaluated", "config": {"instructions": instructions}}
    response = await client.post(AGENTS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def finished_run(
    client: httpx.AsyncClient, auth: dict[str, str], agent: str, prompt: str
) -> dict[str, Any]:
    made = await client.post(RUNS, json={"prompt": prompt, "agent_id": agent}, headers=auth)
    assert made.status_code == 201, made.text
    return await wait_finished(client, auth, made.json()["run_id"])


def body(agents: list[str], results: dict[str, list[tuple[str, str, bool]]]) -> dict[str, Any]:
    """An eval body: case id -> [(agent, run id, check passed)]."""
    return {
        "dataset": {"name": "cases.jsonl", "sha256": SHA},
        "agents": agents,
        "cases": [
            {
                "case_id": case_id,
                "results": [
                    {
                        "agent": agent,
                        "run_id": run_id,
                        "checks": [{"type": "contains", "passed": passed}],
                    }
                    for agent, run_id, passed in rows
                ],
            }
            for case_id, rows in results.items()
        ],
    }
