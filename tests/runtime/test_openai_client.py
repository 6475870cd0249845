"""The SDK client of `openai-compatible:` models builds chunks by validation, loosely otherwise,
and reads streamed chat completions with its own SSE decoding.

Over the wire the models are tested in `test_openai_compatible.py`; here, the two ways a chunk
is built: a valid one by pydantic's validation (the fast way), and one that does not validate
(a slightly malformed server) the SDK's loose way, instead of an error; and the streamed chunks
as a server's bytes arrive, however they are cut, in order, and its error events as the SDK's
errors.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from openai import APIError
from openai.types.chat import ChatCompletionChunk

from atrium.runtime.openai_client import ValidatingOpenAI, coalesced

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
    return [chunk async for chunk in _stream_chunks(reads)]


async def _stream_chunks(
    reads: list[bytes], *, coalesce_ms: int = 0
) -> AsyncIterator[ChatCompletionChunk]:
    async def body() -> AsyncIterator[bytes]:
        for read in reads:
            yield read

    def answer(request: httpx2.Request) -> httpx2.Response:
        assert json.loads(request.content)["messages"] == [{"role": "user", "content": "hi"}]
        return httpx2.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = ValidatingOpenAI(
        base_url="http://127.0.0.1:9/v1", api_key="k", http_client=http, coalesce_ms=coalesce_ms
    )
    async with client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        async with stream:
            async for chunk in stream:
                yield chunk


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


# --- text chunks coalesced over a window ---------------------------------------------------------


def _chunks_of(events: bytes) -> list[ChatCompletionChunk]:
    return [
        ChatCompletionChunk.model_validate_json(line[6:])
        for line in events.split(b"\n\n")
        if line.startswith(b"data: {")
    ]


async def _through(chunks: list[ChatCompletionChunk], window: float) -> list[ChatCompletionChunk]:
    async def source() -> AsyncIterator[ChatCompletionChunk]:
        for chunk in chunks:
            yield chunk

    return [chunk async for chunk in coalesced(source(), window)]


async def test_text_chunks_in_a_window_are_joined_never_across_a_tool_call_or_finish() -> None:
    chunks = _chunks_of(
        _text("Hello")
        + _text(", ")
        + _text("world")
        + _TOOL_CALL
        + _text("a")
        + _text("b")
        + _STOP
        + _text("c")
        + _text("d")
    )
    # A window far longer than the test: every text read while one is held joins it.
    out = await _through(chunks, 60.0)
    assert _contents(out) == ["Hello", ", world", None, "ab", None, "cd"]
    assert out[2].choices[0].delta.tool_calls is not None
    assert out[4].choices[0].finish_reason == "stop"
    # Nothing is joined across choices, usage or vendor fields either.
    other = _text("x").replace(b'"index": 0', b'"index": 1')
    with_usage = _event(usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
    vendor = _text("v").replace(b'"finish_reason": null', b'"finish_reason": null, "x": 1')
    chunks = _chunks_of(_text("1") + _text("2") + other + _text("3") + with_usage + vendor)
    assert _contents(await _through(chunks, 60.0)) == ["1", "2", "x", "3", "hello", "v"]


async def test_a_held_text_goes_out_when_its_window_ends_while_the_server_is_silent() -> None:
    more = asyncio.Event()

    async def source() -> AsyncIterator[ChatCompletionChunk]:
        first, second, third = _chunks_of(_text("a") + _text("b") + _text("c"))
        yield first
        yield second  # held: "a" went out within the window
        await more.wait()  # the server says nothing until "b" was seen
        yield third

    seen: list[str | None] = []
    async with asyncio.timeout(30):
        async for chunk in coalesced(source(), 0.05):
            seen.append(chunk.choices[0].delta.content)
            if seen[-1] == "b":  # released by its window's end alone: else a timeout here
                more.set()
    assert seen == ["a", "b", "c"]


async def test_an_error_comes_after_the_text_read_before_it_and_a_caller_may_leave_early() -> None:
    error = b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'
    reads = [_text("one") + _text("two") + _text("three") + error]
    seen: list[str | None] = []
    with pytest.raises(APIError, match="overloaded"):
        async for chunk in _stream_chunks(reads, coalesce_ms=60_000):
            seen.append(chunk.choices[0].delta.content)
    assert seen == ["one", "twothree"]

    # Leaving after the first chunk closes the stream and its reading task.
    async for _ in _stream_chunks([_text("x"), _text("y"), b"data: [DONE]\n\n"], coalesce_ms=50):
        break


async def test_coalescing_off_yields_every_chunk_and_on_joins_them_over_the_wire() -> None:
    reads = [_text("Hello") + _text(", ") + _text("world") + _STOP + b"data: [DONE]\n\n"]
    assert _contents([c async for c in _stream_chunks(reads, coalesce_ms=0)]) == [
        "Hello",
        ", ",
        "world",
        None,
    ]
    assert _contents([c async for c in _stream_chunks(reads, coalesce_ms=60_000)]) == [
        "Hello",
        ", world",
        None,
    ]
