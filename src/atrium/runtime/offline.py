"""`atrium:offline`: a deterministic model that needs no network, so a fresh install just works
and every feature runs without a provider (docs/design.md#offline-model).

It drives the real agent loop through pydantic-ai's `FunctionModel` and follows a script in the
prompt:
- each line `call NAME {json}` makes one tool call of NAME (the name the model sees, such as
  `write_artifact` or `docs_search`) with those arguments, in order, one per model request;
- then it answers with text that quotes each tool's output;
- with an output schema the answer is the JSON of a line `output {json}` when there is one,
  else a minimal instance of the schema (`offline_instance`).
A prompt without `call` lines keeps the first behaviour: the first request calls
`write_artifact` once (when the agent has that tool), the next one answers naming the prompt and
the thread's turn number (proving the thread history reached it).
A prompt with input parts gets, after its opening line, a line for each (`_received`): a
file's id, name, type and size, and an image's or document's byte count or a text's first
characters, so what a run was given can be checked without a provider. The artifact lists
the same lines under `## Input`: an artifact derived from the run's files.
A summarising request (compaction's instructions, `runtime/compaction.py`) gets a summary that
counts the prompts it covers and quotes the latest three.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.agents.json_schemas import pointed_at
from atrium.kit.json_object import JsonObject
from atrium.runtime.compaction import SUMMARY_LINE, SUMMARY_MARKER, USER_LINE

OFFLINE_MODEL_NAME = "atrium:offline"
ARTIFACT_NAME = "answer.md"
_EXCERPT = 200
_FIRST_CHARS = 60
_QUOTE = 2_000
_MAX_DEPTH: Final = 32
_CALL = re.compile(r"^\s*call\s+(\S+)(?:\s+(.*?))?\s*$")
_OUTPUT = re.compile(r"^\s*output\s+(.*?)\s*$")
_COVERS = re.compile(r"covers (\d+) earlier prompts")
_SUMMARY_QUOTES = 3
_EMPTY_OF_TYPE: Final[dict[str, Any]] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "null": None,
}


@dataclass(frozen=True, slots=True)
class _Script:
    calls: list[tuple[str, str]]  # (tool name, arguments as JSON text)
    output: str | None  # the JSON text of an `output` line


def _script(prompt: str) -> _Script:
    calls: list[tuple[str, str]] = []
    output: str | None = None
    for line in prompt.splitlines():
        if match := _CALL.match(line):
            calls.append((match.group(1), match.group(2) or "{}"))
        elif (match := _OUTPUT.match(line)) and output is None:
            output = match.group(1)
    return _Script(calls, output)


def offline_instance(schema: Any, root: JsonObject | None = None, depth: int = 0) -> Any:
    """The smallest answer the offline model gives for a JSON Schema: required properties
    only, each the first enum value (or the `const`), "", 0, false, [] or a nested object."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    if isinstance(schema.get("$ref"), str):
        try:
            target = pointed_at(root, schema["$ref"])
        except KeyError:
            return None
        return offline_instance(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return offline_instance(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        return {
            name: offline_instance(properties.get(name, {}), root, depth + 1)
            for name in schema.get("required") or []
            if isinstance(name, str)
        }
    return _EMPTY_OF_TYPE.get(str(kind))


def _prompts(messages: list[ModelMessage]) -> list[str]:
    """Each user prompt's text; a prompt with input parts (files, images) is its first."""
    found: list[str] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    found.append(part.content)
                elif isinstance(part, UserPromptPart) and isinstance(part.content[0], str):
                    found.append(part.content[0])
    return found


def _received(turn: list[ModelMessage]) -> list[str]:
    """A line for each input part of the turn's prompt: a file's or an image URL's line
    (`File … (type, size):`, `Image <url> (type, size):`) with what came after it (an image, a
    document, the text's first characters), a text part."""
    content: Sequence[Any] = next(
        (
            part.content
            for message in turn
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        ),
        "",
    )
    if isinstance(content, str):
        return []
    lines: list[str] = []
    items = list(content[1:])
    for index, item in enumerate(items):
        after = items[index + 1] if index + 1 < len(items) else None
        if _is_file_line(item):
            if isinstance(after, BinaryContent):
                kind = "an image" if after.is_image else "a document"
                lines.append(f"Received {item[:-1]}, given as {kind} of {len(after.data)} bytes.")
            else:
                beginning = " ".join(str(after or "").split())[:_FIRST_CHARS]
                lines.append(f"Received {item[:-1]}, beginning: {beginning!r}.")
        elif isinstance(item, str) and item.startswith("File "):
            lines.append(f"Received {item}")
        elif isinstance(item, str) and not (index > 0 and _is_file_line(items[index - 1])):
            lines.append(f"Received text: {' '.join(item.split())[:_FIRST_CHARS]!r}.")
    return lines


def _is_file_line(item: object) -> bool:
    """`File <id> "name" (type, size):` or `Image <url> (type, size):`, before its content."""
    return isinstance(item, str) and item.startswith(("File ", "Image ")) and item.endswith(":")


def _this_turn(messages: list[ModelMessage]) -> list[ModelMessage]:
    """The messages since the run's prompt (earlier turns of the thread come before it)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ModelRequest) and any(
            isinstance(part, UserPromptPart) for part in message.parts
        ):
            return messages[index:]
    return messages


def _artifact_written(turn: list[ModelMessage]) -> bool:
    """`write_artifact` returned in this turn. Not "the last request holds a tool's return":
    a thread whose earlier run was interrupted on an open call gets a synthetic return for it,
    which pydantic-ai sends in the one request with the new prompt."""
    return any(
        isinstance(part, ToolReturnPart) and part.tool_name == "write_artifact"
        for message in turn
        if isinstance(message, ModelRequest)
        for part in message.parts
    )


def _quoted_outputs(turn: list[ModelMessage]) -> list[str]:
    lines: list[str] = []
    for message in turn:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart) and part.outcome == "success":
                lines.append(f"{part.tool_name} returned: {part.model_response_str()[:_QUOTE]}")
            elif isinstance(part, ToolReturnPart):  # a retry prompt, a failure, a denial
                text = part.model_response_str(wrap_if_error=False)
                lines.append(f"{part.tool_name} failed: {text[:_QUOTE]}")
            elif isinstance(part, RetryPromptPart) and part.tool_name:
                lines.append(f"{part.tool_name} failed: {part.model_response()[:_QUOTE]}")
    return lines


def _answer(info: AgentInfo, script: _Script, text: str) -> ToolCallPart | str:
    """The final move: text, or the output tool's call when the run has an output schema."""
    if info.allow_text_output or not info.output_tools:
        return text
    tool = info.output_tools[0]
    args = script.output or json.dumps(offline_instance(tool.parameters_json_schema))
    return ToolCallPart(tool.name, args, tool_call_id="offline-output")


def _summary(transcript: str) -> str:
    """A deterministic summary of a compaction's transcript: how many prompts it covers (an
    earlier summary's count carried on) and the latest few."""
    lines = transcript.splitlines()
    earlier = next((line for line in lines if line.startswith(SUMMARY_LINE)), "")
    carried = _COVERS.search(earlier)
    prompts = [line[len(USER_LINE) :] for line in lines if line.startswith(USER_LINE)]
    total = (int(carried[1]) if carried else 0) + len(prompts)
    latest = [" ".join(prompt.split())[:80] for prompt in prompts[-_SUMMARY_QUOTES:]]
    return "\n".join(
        [f"This summary covers {total} earlier prompts. The latest of them:"]
        + [f"- {prompt}" for prompt in latest]
    )


def _plan(messages: list[ModelMessage], info: AgentInfo) -> ToolCallPart | str:
    """The next move: a tool call, or the final answer."""
    prompts = _prompts(messages)
    if info.instructions and info.instructions.startswith(SUMMARY_MARKER):
        return _summary(prompts[-1] if prompts else "")
    prompt = prompts[-1] if prompts else ""
    excerpt = " ".join(prompt.split())[:_EXCERPT]
    script = _script(prompt)
    turn = _this_turn(messages)
    opening = f"Offline answer (turn {len(prompts)}) to: {excerpt}."
    received = _received(turn)
    if script.calls:
        step = sum(isinstance(message, ModelResponse) for message in turn)
        if step < len(script.calls):
            name, arguments = script.calls[step]
            return ToolCallPart(name, arguments, tool_call_id=f"offline-call-{step + 1}")
        return _answer(info, script, "\n".join([opening, *received, *_quoted_outputs(turn)]))
    tool_names = {tool.name for tool in info.function_tools}
    if "write_artifact" in tool_names and not _artifact_written(turn):
        content = f"# Answer\n\nPrompt: {excerpt}\n\nThis is turn {len(prompts)} of the thread.\n"
        if received:  # an artifact derived from the run's files: what it was given
            content += "\n## Input\n\n" + "".join(f"- {line}\n" for line in received)
        args = {"name": ARTIFACT_NAME, "content": content, "mime_type": "text/markdown"}
        return ToolCallPart("write_artifact", args, tool_call_id="offline-write-artifact")
    wrote = f" I wrote {ARTIFACT_NAME}." if "write_artifact" in tool_names else ""
    return _answer(info, script, "\n".join([opening + wrote, *received]))


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    move = _plan(messages, info)
    return ModelResponse(parts=[move if isinstance(move, ToolCallPart) else TextPart(move)])


async def _respond_streamed(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    move = _plan(messages, info)
    if isinstance(move, ToolCallPart):
        args = move.args if isinstance(move.args, str) else json.dumps(move.args)
        yield {
            0: DeltaToolCall(name=move.tool_name, json_args=args, tool_call_id=move.tool_call_id)
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
