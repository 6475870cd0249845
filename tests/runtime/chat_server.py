"""A small OpenAI-compatible chat-completions server, run by the tests on a loopback port.

It speaks the wire protocol a real server (Ollama, vLLM, llama.cpp) speaks: JSON or streamed
SSE chunks, tool calls with streamed arguments, usage in the last chunk. Its behaviour:
- the model `broken` answers HTTP 400;
- a request whose last message is a tool result gets a streamed final answer (which quotes that
  result when the server was told a `tool_call`);
- otherwise, when tools are offered, it calls `write_artifact`, or the `tool_call=(name, args)`
  it was told to make;
- told an `output`, it answers by calling the run's output tool (`final_result`) with it;
- `stall_request=n` makes the n-th request hang (a worker can be killed in the middle of it);
- `pause=s` waits `s` seconds before each word of a streamed answer (a model writing slowly);
- `call_id` is the id of every tool call it makes (`call_1`);
- a multimodal user message (text, `image_url` and `file` parts) is taken too: its text parts
  are the prompt;
- `/embeddings` answers each input with a deterministic vector of `EMBEDDING_DIMENSIONS` (its
  words hashed: texts sharing words are near); `embeddings_status` set makes it answer that
  HTTP status instead, as a failing server would.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import struct
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.loopback import LoopbackServer

ANSWER = "The artifact is written; here is the final answer."
EMBEDDING_DIMENSIONS = 16


class ChatServer:
    def __init__(
        self,
        *,
        stall_request: int | None = None,
        tool_call: tuple[str, dict[str, Any]] | None = None,
        output: dict[str, Any] | None = None,
        pause: float = 0.0,
        port: int | None = None,
        call_id: str = "call_1",
    ) -> None:
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str | None] = []  # each request's Authorization header
        self.stall_request = stall_request
        self.tool_call = tool_call
        self.output = output
        self.pause = pause
        self.call_id = call_id
        self.embedding_requests: list[dict[str, Any]] = []
        self.embeddings_status: int | None = None
        self._release = asyncio.Event()
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )
        # A stalled request's client may be gone (killed): the server drops it at the end.
        self._served = LoopbackServer(app, path="/v1", port=port, lifespan="off", force_exit=True)
        self.port, self.base_url = self._served.port, self._served.url

    async def __aenter__(self) -> ChatServer:
        await self._served.__aenter__()
        return self

    async def __aexit__(self, *_: object) -> None:
        self._release.set()
        await self._served.__aexit__()

    @property
    def connections(self) -> int:
        """How many client connections are open now."""
        return self._served.connections

    async def _chat(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append(body)
        self.authorizations.append(request.headers.get("authorization"))
        if len(self.requests) == self.stall_request:
            await self._release.wait()
            return Response(status_code=503)
        if body["model"] == "broken":
            return JSONResponse(
                {"error": {"message": "model is broken", "type": "invalid_request_error"}},
                status_code=400,
            )
        move = self._move(body)
        if body.get("stream"):
            return StreamingResponse(
                _chunks(body["model"], move, self.pause, self.call_id),
                media_type="text/event-stream",
            )
        return JSONResponse(_completion(body["model"], move, self.call_id))

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.embedding_requests.append(body)
        if self.embeddings_status is not None:
            return JSONResponse(
                {"error": {"message": "embeddings are down", "type": "server_error"}},
                status_code=self.embeddings_status,
            )
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        as_base64 = body.get("encoding_format") == "base64"  # what openai's client asks for
        data = [
            {"object": "embedding", "index": index, "embedding": _embedding(text, as_base64)}
            for index, text in enumerate(inputs)
        ]
        tokens = sum(len(text.split()) for text in inputs)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    def _move(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        offered = {tool["function"]["name"] for tool in body.get("tools") or []}
        answered = messages[-1]["role"] == "tool"
        can_output = self.output is not None and "final_result" in offered
        if not answered and self.tool_call is not None:
            name, arguments = self.tool_call
            return {"tool": name, "arguments": json.dumps(arguments)}
        if can_output:
            return {"tool": "final_result", "arguments": json.dumps(self.output)}
        if answered or not offered:
            quoted = f" The tool said: {messages[-1]['content']}" if self.tool_call else ""
            return {"content": ANSWER + (quoted if answered else "")}
        prompt = _text_of(next(m["content"] for m in reversed(messages) if m["role"] == "user"))
        arguments = json.dumps(
            {"name": "notes.txt", "content": f"notes on {prompt}", "mime_type": "text/plain"}
        )
        return {"tool": "write_artifact", "arguments": arguments}


def _embedding(text: str, as_base64: bool) -> list[float] | str:
    """Each word adds 1 at a place its hash picks (sha256: the same in every process); as
    base64, the little-endian float32 bytes, as OpenAI sends them."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % EMBEDDING_DIMENSIONS] += 1.0
    if as_base64:
        return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
    return vector


def _text_of(content: str | list[dict[str, Any]]) -> str:
    """A user message's text: its content, or the text parts of a multimodal one (images and
    files are `image_url` and `file` parts beside them)."""
    if isinstance(content, str):
        return content
    return " ".join(part["text"] for part in content if part.get("type") == "text")


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}


def _completion(model: str, move: dict[str, Any], call_id: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": move.get("content")}
    if "tool" in move:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": move["tool"], "arguments": move["arguments"]},
            }
        ]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool" in move else "stop",
            }
        ],
        "usage": _usage(),
    }


async def _chunks(
    model: str, move: dict[str, Any], pause: float, call_id: str
) -> AsyncIterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        payload = {
            "id": "chatcmpl-test",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return f"data: {json.dumps(payload)}\n\n".encode()

    yield chunk({"role": "assistant", "content": ""})
    if "tool" in move:
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": move["tool"], "arguments": ""},
                    }
                ]
            }
        )
        arguments = move["arguments"]
        for start in range(0, len(arguments), 16):
            piece = arguments[start : start + 16]
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        yield chunk({}, "tool_calls")
    else:
        for word in move["content"].split(" "):
            if pause:
                await asyncio.sleep(pause)
            yield chunk({"content": word + " "})
        yield chunk({}, "stop")
    usage = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": _usage(),
    }
    yield f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    """A server of the test's own with the default behaviour; a module that wants another
    defines its own `chat_server`."""
    async with ChatServer() as server:
        yield server
