"""A slow OpenAI-compatible chat server: streams its answer word by word with a pause between
words, so a run lasts long enough to watch it live, cancel it, or drop its event stream; and,
given a script in the prompt, calls tools and answers in JSON, as `atrium:offline` does.

    python slow_llm.py PORT [SECONDS_PER_WORD] [WORDS] [--log FILE]
    python slow_llm.py --port PORT [--log FILE]

Defaults: 0.1 s and 30 words. `--log FILE` appends each request's body, as received, to FILE
(one JSON document a line): what the model was sent. No atrium imports: it is a plain
OpenAI-compatible provider for any client (`ATRIUM_LLM_BASE_URL=http://127.0.0.1:PORT/v1`).

The answer is `word1 word2 … wordN`, streamed (or, without `stream`, sent whole after the
pause of every word), unless the request offers tools (or asks for a JSON `response_format`)
and the last user message holds script lines:
- each line `call NAME {json}` makes one tool call of NAME (the name the model is offered,
  such as `docs_add`) with those arguments, in order, one per model request; the `tool`
  messages of the request (the calls already answered since that user message) say how far
  the script has got;
- then the final answer: when the request offers an output tool (`final_result…`, how
  pydantic-ai asks for structured output) a call of it with the JSON of the line
  `output {json}`, or else a minimal instance of its schema (required properties only: the
  first enum value, "", 0, false, [], nested objects); with a JSON `response_format`, the
  same JSON as the message; otherwise text quoting each call's output (`NAME returned: …`).
A tool call's arguments stream in pieces of 16 characters, a text answer word by word, each
SECONDS_PER_WORD apart.

The script switches itself on (no flag) because a prompt is its own script, as with
atrium:offline, and because every request without script lines is answered as before, byte
for byte: the tests use this server for live runs (tests/processes.py) and
`streaming_bench.py` for a thousand at once, a request without tools never looks at its
messages, and each model's plain chunks are encoded once, so this server's CPU stays small
beside the one measured. A prompt without script lines to an agent with an output schema
gets the words, as from a model that ignores the schema: pydantic-ai sends them back for a
retry, until the run fails with OUTPUT_INVALID.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import IO, Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PAUSE = 0.1
WORDS = 30
LOG: IO[bytes] | None = None


def answer() -> list[str]:
    return [f"word{index}" for index in range(1, WORDS + 1)]


def chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> bytes:
    payload = {
        "id": "chatcmpl-slow",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(payload)}\n\n".encode()


@lru_cache(maxsize=64)
def encoded(model: str) -> tuple[bytes, list[bytes], bytes]:
    """The first chunk, one chunk per word, and the end (stop, usage, [DONE]) of an answer."""
    words = [
        chunk(model, {"content": word if index == 0 else " " + word})
        for index, word in enumerate(answer())
    ]
    return chunk(model, {"role": "assistant", "content": ""}), words, _end(model)


async def stream(model: str) -> AsyncIterator[bytes]:
    first, words, end = encoded(model)
    yield first
    for word in words:
        await asyncio.sleep(PAUSE)
        yield word
    yield end


def _end(model: str, finish: str = "stop", completion_tokens: int | None = None) -> bytes:
    tokens = WORDS if completion_tokens is None else completion_tokens
    usage = {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens}
    final = {
        "id": "chatcmpl-slow",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": usage,
    }
    return chunk(model, {}, finish) + f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode()


async def chat(request: Request) -> Response:
    raw = await request.body()
    if LOG is not None:
        # One document a line: a raw newline in JSON is whitespace outside its strings.
        LOG.write(raw.replace(b"\n", b" ") + b"\n")
        LOG.flush()
    body = json.loads(raw)
    if body.get("tools") or body.get("response_format"):
        move = scripted(body)
        if move is not None:
            return await _scripted_response(body, move)
    if body.get("stream"):
        return StreamingResponse(stream(body["model"]), media_type="text/event-stream")
    await asyncio.sleep(PAUSE * WORDS)
    return JSONResponse(
        {
            "id": "chatcmpl-slow",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": " ".join(answer())},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": WORDS, "total_tokens": 50 + WORDS},
        }
    )


# --- scripts ----------------------------------------------------------------------------------
_CALL = re.compile(r"^\s*call\s+(\S+)(?:\s+(.*?))?\s*$")
_OUTPUT = re.compile(r"^\s*output\s+(.*?)\s*$")
_OUTPUT_TOOL = "final_result"
_EXCERPT = 200
_QUOTE = 2_000
_PIECE = 16  # characters of a tool call's arguments per chunk
_MAX_DEPTH = 32
_EMPTY_OF_TYPE: dict[str, Any] = {
    "string": "",
    "integer": 0,
    "number": 0,
    "boolean": False,
    "array": [],
    "null": None,
}


@dataclass(frozen=True, slots=True)
class ToolCall:
    call_id: str
    name: str
    arguments: str  # JSON text


@dataclass(frozen=True, slots=True)
class Message:
    content: str


def scripted(body: dict[str, Any]) -> ToolCall | Message | None:
    """The next move of the script in the last user message, or None when it holds none."""
    messages = body.get("messages") or []
    start = _last_user(messages)
    if start is None:
        return None
    prompt = _text(messages[start].get("content"))
    calls: list[tuple[str, str]] = []
    output: str | None = None
    for line in prompt.splitlines():
        if match := _CALL.match(line):
            calls.append((match.group(1), match.group(2) or "{}"))
        elif (match := _OUTPUT.match(line)) and output is None:
            output = match.group(1)
    if not calls and output is None:
        return None
    turn = messages[start + 1 :]
    step = sum(message.get("role") == "tool" for message in turn)
    if step < len(calls):
        name, arguments = calls[step]
        return ToolCall(f"call_{step + 1}", name, arguments)
    tool = _output_tool(body.get("tools") or [])
    if tool is not None:
        name, schema = tool
        return ToolCall(f"call_{step + 1}", name, output or json.dumps(minimal_instance(schema)))
    schema = _response_schema(body.get("response_format"))
    if schema is not None:
        return Message(output or json.dumps(minimal_instance(schema)))
    users = sum(message.get("role") == "user" for message in messages)
    excerpt = " ".join(prompt.split())[:_EXCERPT]
    lines = [f"Answer (turn {users}) to: {excerpt}.", *_quoted_outputs(turn)]
    return Message("\n".join(lines))


def _last_user(messages: list[dict[str, Any]]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return None


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    return ""


def _quoted_outputs(turn: list[dict[str, Any]]) -> list[str]:
    names: dict[str, str] = {}
    lines: list[str] = []
    for message in turn:
        for call in message.get("tool_calls") or []:
            names[call.get("id", "")] = call.get("function", {}).get("name", "?")
        if message.get("role") == "tool":
            name = names.get(message.get("tool_call_id", ""), "?")
            lines.append(f"{name} returned: {_text(message.get('content'))[:_QUOTE]}")
    return lines


def _output_tool(tools: list[dict[str, Any]]) -> tuple[str, Any] | None:
    """The name and schema of the tool pydantic-ai offers for a structured answer."""
    for tool in tools:
        function = tool.get("function") or {}
        name = function.get("name", "")
        if name == _OUTPUT_TOOL or name.startswith(_OUTPUT_TOOL + "_"):
            return name, function.get("parameters") or {}
    return None


def _response_schema(response_format: Any) -> Any:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema") or {}
    if response_format.get("type") == "json_object":
        return {"type": "object"}
    return None


def minimal_instance(schema: Any, root: Any = None, depth: int = 0) -> Any:
    """The smallest answer for a JSON Schema: required properties only, each the first enum
    value (or the `const`), "", 0, false, [] or a nested object."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None
    if isinstance(schema.get("$ref"), str):
        target = _pointed_at(root, schema["$ref"])
        return None if target is None else minimal_instance(target, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for combinator in ("anyOf", "oneOf", "allOf"):
        options = schema.get(combinator)
        if isinstance(options, list) and options:
            return minimal_instance(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        return {
            name: minimal_instance(properties.get(name, {}), root, depth + 1)
            for name in schema.get("required") or []
            if isinstance(name, str)
        }
    return _EMPTY_OF_TYPE.get(str(kind))


def _pointed_at(root: Any, ref: str) -> Any:
    """What a local `$ref` (`#/$defs/Name`) points at in `root`, or None."""
    if not ref.startswith("#"):
        return None
    target = root
    for token in ref[1:].split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and key in target:
            target = target[key]
        elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
            target = target[int(key)]
        else:
            return None
    return target


def _pieces(move: ToolCall | Message) -> list[str]:
    if isinstance(move, ToolCall):
        text = move.arguments
        return [text[start : start + _PIECE] for start in range(0, len(text), _PIECE)]
    words = move.content.split(" ")
    return [word if index == 0 else " " + word for index, word in enumerate(words)]


async def _scripted_response(body: dict[str, Any], move: ToolCall | Message) -> Response:
    model = body["model"]
    if body.get("stream"):
        return StreamingResponse(_scripted_stream(model, move), media_type="text/event-stream")
    pieces = _pieces(move)
    await asyncio.sleep(PAUSE * len(pieces))
    return JSONResponse(_completion(model, move, len(pieces)))


async def _scripted_stream(model: str, move: ToolCall | Message) -> AsyncIterator[bytes]:
    pieces = _pieces(move)
    yield chunk(model, {"role": "assistant", "content": ""})
    for delta in _deltas(move, pieces):
        await asyncio.sleep(PAUSE)
        yield chunk(model, delta)
    finish = "tool_calls" if isinstance(move, ToolCall) else "stop"
    yield _end(model, finish, len(pieces))


def _deltas(move: ToolCall | Message, pieces: list[str]) -> Iterator[dict[str, Any]]:
    if isinstance(move, Message):
        for piece in pieces:
            yield {"content": piece}
        return
    for index, piece in enumerate(pieces or [""]):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if index == 0:  # the first piece names the call
            call.update(id=move.call_id, type="function")
            call["function"]["name"] = move.name
        yield {"tool_calls": [call]}


def _completion(model: str, move: ToolCall | Message, tokens: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(move, ToolCall):
        function = {"name": move.name, "arguments": move.arguments}
        message["tool_calls"] = [{"id": move.call_id, "type": "function", "function": function}]
    else:
        message["content"] = move.content
    return {
        "id": "chatcmpl-slow",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if isinstance(move, ToolCall) else "stop",
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": tokens, "total_tokens": 50 + tokens},
    }


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def main(argv: list[str]) -> None:
    global PAUSE, WORDS, LOG
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int, nargs="?")
    parser.add_argument("seconds_per_word", type=float, nargs="?", default=PAUSE)
    parser.add_argument("words", type=int, nargs="?", default=WORDS)
    # The guides start it as `--port N`, the form their runner and readers know from atrium.
    parser.add_argument("--port", dest="port_option", type=int, metavar="PORT")
    parser.add_argument("--log", metavar="FILE", help="append each request's body to FILE")
    args = parser.parse_args(argv)
    if (args.port is None) == (args.port_option is None):
        parser.error("give the port once: PORT or --port PORT")
    PAUSE, WORDS = args.seconds_per_word, args.words
    LOG = open(args.log, "ab") if args.log else None  # noqa: SIM115 - open while serving
    port = args.port if args.port is not None else args.port_option
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main(sys.argv[1:])
