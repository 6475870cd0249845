"""Helpers of the `if_busy` tests: a model that stalls mid-answer, one that answers with what
it was given (the thread's history), and the waits between them. HTTP only, no internals."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import events_of
from tests.runs.helpers import RUNS

PARTIAL = "Half an answer"


async def _stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield PARTIAL
    await asyncio.sleep(60)
    yield " never sent"


def seen(messages: list[ModelMessage]) -> dict[str, list[str]]:
    """What a model request carried: the user prompts, the answers' text, the tool calls and
    the tool results, each in order."""
    found: dict[str, list[str]] = {"prompts": [], "answers": [], "calls": [], "returns": []}
    for message in messages:
        parts = message.parts
        if isinstance(message, ModelRequest):
            found["prompts"] += [str(p.content) for p in parts if isinstance(p, UserPromptPart)]
            found["returns"] += [p.tool_name for p in parts if isinstance(p, ToolReturnPart)]
        elif isinstance(message, ModelResponse):
            found["answers"] += [p.content for p in parts if isinstance(p, TextPart)]
            found["calls"] += [p.tool_name for p in parts if isinstance(p, ToolCallPart)]
    return found


async def _echoes(messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield json.dumps(seen(messages))


async def agents(make_agent: AgentFactory, models: ModelRegistry) -> tuple[str, str]:
    """(an agent whose model stalls after streaming `PARTIAL`, one whose model answers with
    the JSON of what it was given)."""
    models.register("test:busy-stalls", FunctionModel(stream_function=_stalls))
    models.register("test:busy-echoes", FunctionModel(stream_function=_echoes))
    return (
        await make_agent(model="test:busy-stalls", tools=[]),
        await make_agent(model="test:busy-echoes", tools=[]),
    )


async def wait_event(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, kind: str, within: float = 20
) -> dict[str, Any]:
    """The run's first event of `kind`, once stored."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        for event in await events_of(client, auth, run_id):
            if event["event"] == kind:
                found: dict[str, Any] = event
                return found
        assert asyncio.get_running_loop().time() < deadline, f"no {kind} event in {run_id}"
        await asyncio.sleep(0.02)


async def post_run(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> httpx.Response:
    return await client.post(RUNS, json=body, headers=auth)


async def thread_runs(
    client: httpx.AsyncClient, auth: dict[str, str], thread_id: str
) -> list[dict[str, Any]]:
    """The thread's runs, oldest first."""
    response = await client.get(RUNS, params={"thread_id": thread_id, "limit": 100}, headers=auth)
    assert response.status_code == 200, response.text
    return list(reversed(response.json()["data"]))
