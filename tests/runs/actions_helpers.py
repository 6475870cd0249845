"""Helpers of the human-in-the-loop tests: wait for a run to need its caller, answer it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.runs.helpers import RUNS, TERMINAL

LOOKUP = {
    "type": "function",
    "name": "lookup",
    "description": "Look a word up in the caller's dictionary.",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
}


async def wait_status(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    run_id: str,
    wanted: str,
    within: float = 20.0,
) -> dict[str, Any]:
    """Poll until the run has status `wanted` (fails early if it finishes otherwise)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        response = await client.get(f"{RUNS}/{run_id}", headers=auth)
        assert response.status_code == 200, response.text
        run: dict[str, Any] = response.json()
        if run["status"] == wanted:
            return run
        assert run["status"] not in TERMINAL, run
        assert asyncio.get_running_loop().time() < deadline, f"run still {run['status']}"
        await asyncio.sleep(0.02)


async def act(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    run_id: str,
    body: dict[str, Any],
    **headers: str,
) -> httpx.Response:
    return await client.post(f"{RUNS}/{run_id}/actions", json=body, headers={**auth, **headers})


async def events_of(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> list[Any]:
    response = await client.get(
        f"{RUNS}/{run_id}/events", headers={**auth, "Accept": "application/json"}
    )
    assert response.status_code == 200
    data: list[Any] = response.json()["data"]
    return data
