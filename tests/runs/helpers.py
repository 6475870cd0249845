"""Helpers shared by the runs, worker and runtime tests: HTTP only, no internals."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo

RUNS = "/api/v1/public/agent/runs"
TERMINAL = {"completed", "failed", "cancelled"}


async def create_run(
    client: httpx.AsyncClient, auth: dict[str, str], prompt: str = "Say hello", **body: Any
) -> dict[str, Any]:
    response = await client.post(RUNS, json={"prompt": prompt, **body}, headers=auth)
    assert response.status_code == 201, response.text
    run: dict[str, Any] = response.json()
    return run


async def wait_finished(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, within: float = 20.0
) -> dict[str, Any]:
    """Poll until the run is finished (the way a client without SSE would)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        response = await client.get(f"{RUNS}/{run_id}", headers=auth)
        assert response.status_code == 200, response.text
        run: dict[str, Any] = response.json()
        if run["status"] in TERMINAL:
            return run
        assert asyncio.get_running_loop().time() < deadline, f"run still {run['status']}"
        await asyncio.sleep(0.02)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Frames of an SSE body: `{"id", "event", "data"}`; comment lines (heartbeats) skipped."""
    frames: list[dict[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        frame: dict[str, Any] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            frame[name] = value[1:] if value.startswith(" ") else value
        if "data" in frame:
            frame["data"] = json.loads(frame["data"])
            frame["id"] = int(frame["id"])
            frames.append(frame)
    return frames


async def read_stream(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    run_id: str,
    *,
    last_event_id: int | None = None,
    stop_after: int | None = None,
) -> list[dict[str, Any]]:
    """Follow the run's SSE stream to its end (or disconnect after `stop_after` frames)."""
    headers = dict(auth)
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    frames: list[dict[str, Any]] = []
    buffer = ""
    async with client.stream("GET", f"{RUNS}/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for chunk in response.aiter_text():
            buffer += chunk
            while "\n\n" in buffer.replace("\r\n", "\n"):
                normalized = buffer.replace("\r\n", "\n")
                block, _, rest = normalized.partition("\n\n")
                buffer = rest
                frames.extend(parse_sse(block + "\n\n"))
                if stop_after is not None and len(frames) >= stop_after:
                    return frames
    return frames


async def talks_then_stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    """A streaming model that says a word, then keeps its run running for a minute."""
    yield "thinking"
    await asyncio.sleep(60)
    yield " never"
