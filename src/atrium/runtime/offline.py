"""`atrium:offline`: a deterministic model that needs no network, so a fresh install just works.

It drives the real agent loop through pydantic-ai's `FunctionModel`: the first request of a run
calls `write_artifact` once (when the agent has that tool), the next one streams a final answer
that names the prompt and the thread's turn number (proving the thread history reached it).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

OFFLINE_MODEL_NAME = "atrium:offline"
ARTIFACT_NAME = "answer.md"
_EXCERPT = 200


def _prompts(messages: list[ModelMessage]) -> list[str]:
    found: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    found.append(part.content)
    return found


def _tool_already_returned(messages: list[ModelMessage]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and any(
        isinstance(part, ToolReturnPart) for part in last.parts
    )


def _plan(messages: list[ModelMessage], info: AgentInfo) -> ToolCallPart | str:
    """The next move: the artifact tool call, or the final answer's text."""
    prompts = _prompts(messages)
    prompt = prompts[-1] if prompts else ""
    excerpt = " ".join(prompt.split())[:_EXCERPT]
    tool_names = {tool.name for tool in info.function_tools}
    if "write_artifact" in tool_names and not _tool_already_returned(messages):
        content = f"# Answer\n\nPrompt: {excerpt}\n\nThis is turn {len(prompts)} of the thread.\n"
        args = {"name": ARTIFACT_NAME, "content": content, "mime_type": "text/markdown"}
        return ToolCallPart("write_artifact", args, tool_call_id="offline-write-artifact")
    wrote = f" I wrote {ARTIFACT_NAME}." if "write_artifact" in tool_names else ""
    return f"Offline answer (turn {len(prompts)}) to: {excerpt}.{wrote}"


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    move = _plan(messages, info)
    return ModelResponse(parts=[move if isinstance(move, ToolCallPart) else TextPart(move)])


async def _respond_streamed(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    move = _plan(messages, info)
    if isinstance(move, ToolCallPart):
        yield {
            0: DeltaToolCall(
                name=move.tool_name,
                json_args=json.dumps(move.args),
                tool_call_id=move.tool_call_id,
            )
        }
        return
    words = move.split(" ")
    # A few chunks, so the answer streams as several message.delta events.
    step = max(1, len(words) // 4)
    for start in range(0, len(words), step):
        chunk = " ".join(words[start : start + step])
        yield chunk if start == 0 else " " + chunk


def offline_model() -> FunctionModel:
    return FunctionModel(_respond, stream_function=_respond_streamed, model_name=OFFLINE_MODEL_NAME)
