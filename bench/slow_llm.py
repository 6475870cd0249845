"""A slow OpenAI-compatible chat server: streams its answer word by word with a pause between
words, so a run lasts long enough to watch it live, cancel it, or drop its event stream.

Run as `python slow_llm.py PORT SECONDS_PER_WORD WORDS`. Never calls tools. The tests use it
for live runs (tests/processes.py) and `streaming_bench.py` for a thousand at once, so each
model's chunks are encoded once: this server's CPU stays small beside the one measured.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from functools import lru_cache
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

PAUSE = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
WORDS = int(sys.argv[3]) if len(sys.argv) > 3 else 30


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


def _end(model: str) -> bytes:
    usage = {"prompt_tokens": 50, "completion_tokens": WORDS, "total_tokens": 50 + WORDS}
    final = {
        "id": "chatcmpl-slow",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": usage,
    }
    return chunk(model, {}, "stop") + f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode()


async def chat(request: Request) -> Response:
    body = await request.json()
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


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", lifespan="off")
