"""The SDK client of `openai-compatible:` models builds chunks by validation, loosely otherwise,
and reads streamed chat completions with its own SSE decoding.

Over the wire the models are tested in `test_openai_compatible.py`; here, the two ways a chunk
is built: a valid one by pydantic's validation (the fast way, issue 20), and one that does not
validate (a slightly malformed server) the SDK's loose way, as before, instead of an error; and
the streamed chunks as a server's bytes arrive, however they are cut, in order, and its error
events as the SDK's errors.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from openai import APIError
from openai.types.chat import ChatCompletionChunk

from atrium.runtime.openai_client import ValidatingOpenAI

_RESPONSE = httpx2.Response(200, request=httpx2.Request("POST", "http://127.0.0.1/v1/x"))


def _chunk(**changes: Any) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hello"}, "finish_reason": None}],
        "x_vendor": {"kept": True},
    }
    chunk.update(changes)
    return chunk


def _build(data: dict[str, Any]) -> ChatCompletionChunk:
    client = ValidatingOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k")
    return client._process_response_data(data=data, cast_to=ChatCompletionChunk, response=_RESPONSE)


def test_a_valid_chunk_is_validated_with_its_extra_fields() -> None:
    chunk = _build(_chunk())
    assert chunk.choices[0].delta.content == "hello"
    assert chunk.model_extra == {"x_vendor": {"kept": True}}
    assert chunk.model_fields_set >= {"id", "choices", "created", "model", "object"}


def test_a_chunk_that_does_not_validate_is_still_built() -> None:
    # `created` as text and no `object`: strict validation would refuse it.
    chunk = _build(_chunk(created="soon", object=None))
    assert isinstance(chunk, ChatCompletionChunk)
    assert chunk.choices[0].delta.content == "hello"
    assert chunk.created == "soon"


# --- streamed chat completions -----------------------------------------------------------------


def _event(**changes: Any) -> bytes:
    chunk = _chunk(**changes)
    del chunk["x_vendor"]
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _text(text: str) -> bytes:
    return _event(choices=[{"index": 0, "delta": {"content": text}, "finish_reason": None}])


_TOOL_CALL = _event(
    choices=[
        {
            "index": 0,
            "delta": {
                "tool_calls": [
                    {"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}
                ]
            },
            "finish_reason": None,
        }
    ]
)
_STOP = _event(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}])


async def _stream(reads: list[bytes]) -> list[ChatCompletionChunk]:
    """The chunks the client yields for a server whose body arrives as `reads`."""

    async def body() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    def answer(request: httpx2.Request) -> httpx2.Response:
        assert json.loads(request.content)["messages"] == [{"role": "user", "content": "hi"}]
        return httpx2.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = ValidatingOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", http_client=http)
    async with client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        return [chunk async for chunk in stream]


def _contents(chunks: list[ChatCompletionChunk]) -> list[str | None]:
    return [c.choices[0].delta.content if c.choices else None for c in chunks]


async def test_every_chunk_is_yielded_in_order() -> None:
    chunks = await _stream(
        [
            _text("Hello") + _text(", world"),
            _TOOL_CALL + _text("after") + _STOP + b"data: [DONE]\n\n" + _text("ignored"),
        ]
    )
    assert _contents(chunks) == ["Hello", ", world", None, "after", None]
    assert chunks[2].choices[0].delta.tool_calls is not None
    assert chunks[4].choices[0].finish_reason == "stop"


async def test_events_split_across_reads_and_crlf_lines_are_decoded() -> None:
    whole = _text("one").replace(b"\n", b"\r\n") + b": a comment\n\n" + _text("two")
    chunks = await _stream([whole[:7], whole[7:40], whole[40:], b"data: [DONE]\n\n"])
    assert "".join(c or "" for c in _contents(chunks)) == "onetwo"


async def test_an_error_event_raises_the_sdks_error() -> None:
    error = b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'
    with pytest.raises(APIError, match="overloaded"):
        await _stream([_text("partial") + error])
