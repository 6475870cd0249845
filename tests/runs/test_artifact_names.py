"""Artifact names a model may not choose: the `write_artifact` tool refuses
dot-files, `..`, paths, control and invisible characters and names Windows reserves, with an
error the model can act on, and stores nothing; plain names still work."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished

UNSAFE_NAMES = [
    ".bashrc",
    "..",
    ".",
    "../../etc/passwd",
    "notes/../../.bashrc",
    "a\\b.txt",
    "/etc/passwd",
    "-rf",
    "report\x1b[2J.md",
    "line\nbreak.md",
    "evil\u202edm.exe",  # shows as "evilexe.md"
    "zero\u200bwidth.md",
    "CON",
    "nul.txt",
    "a:b.md",
    "trailing.",
    "é" * 128,  # 256 bytes in UTF-8
]
PLAIN_NAMES = ["report.md", "Q3 report (final).pdf", "résumé.txt", "a.b.c", "x" * 255]


def _writes(names: list[str], answers: list[str]) -> FunctionModel:
    """A model that calls `write_artifact` once per name, all in its first response, keeps
    what the tool answered each call, then ends with text."""

    async def stream(messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[Any]:
        if any(isinstance(message, ModelResponse) for message in messages):
            answers.extend(
                str(part.content)
                for message in messages
                if isinstance(message, ModelRequest)
                for part in message.parts
                if isinstance(part, RetryPromptPart | ToolReturnPart)
            )
            yield "done"
            return
        calls: DeltaToolCalls = {
            index: DeltaToolCall(
                name="write_artifact", json_args=json.dumps({"name": name, "content": "x"})
            )
            for index, name in enumerate(names)
        }
        yield calls

    return FunctionModel(stream_function=stream)


async def _run_writing(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    names: list[str],
) -> tuple[dict[str, Any], list[str]]:
    answers: list[str] = []
    models.register("test:writer", _writes(names, answers))
    agent_id = await make_agent(model="test:writer", tools=["write_artifact"])
    done = await wait_finished(
        client, auth, (await create_run(client, auth, agent_id=agent_id))["run_id"]
    )
    return done, answers


@pytest.mark.parametrize("name", UNSAFE_NAMES)
async def test_an_unsafe_name_is_refused_to_the_model_and_nothing_is_stored(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    name: str,
) -> None:
    done, answers = await _run_writing(client, auth, make_agent, models, [name, "kept.md"])
    assert done["status"] == "completed", done
    assert [artifact["name"] for artifact in done["artifacts"]] == ["kept.md"]
    listed = await client.get(f"{RUNS}/{done['run_id']}/artifacts", headers=auth)
    assert [artifact["name"] for artifact in listed.json()["data"]] == ["kept.md"]
    refusal, saved = answers
    assert "choose a plain name" in refusal, refusal
    assert saved.startswith("Saved artifact kept.md"), saved


async def test_plain_names_are_stored(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, models: ModelRegistry
) -> None:
    done, answers = await _run_writing(client, auth, make_agent, models, PLAIN_NAMES)
    assert done["status"] == "completed", done
    assert all(answer.startswith("Saved artifact") for answer in answers), answers
    assert sorted(artifact["name"] for artifact in done["artifacts"]) == sorted(PLAIN_NAMES)
