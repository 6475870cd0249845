"""The OpenAI SDK client of `openai-compatible:` models, with a leaner streamed chat completion.

With many runs streaming at once the SDK is a large share of the server's CPU, in three places
this client cuts, keeping the SDK's request building, auth, retries and errors
(docs/decisions/0008-lean-openai-compatible-client.md):
- *Each chunk's build.* The SDK builds every streamed chunk with its own pure-Python
  `construct_type` unless its strict validation is on, about twenty times the cost of
  pydantic-core's validation of the same dict. Strict mode would refuse the slightly malformed
  chunks some OpenAI-compatible servers send, so chunks are validated first and one that does
  not validate is built the SDK's loose way.
- *The request body's transform.* `chat.completions.create` walks the whole body (every message
  of the history, every tool schema) against its TypedDicts to rename aliased keys and drop
  omitted values. The chat-completion parameters have no aliased keys and pydantic-ai hands
  over plain JSON values, so a streamed create only drops the omitted ones.
- *The SSE decoding.* The SDK's decoder parses each line in Python and `json.loads` each event
  before the chunk is built; `_ChunkStream` splits the bytes into events and validates each
  chunk from its JSON text in one pydantic-core call.
Non-streamed creates (and everything else) go through the SDK unchanged.

A streamed answer's text chunks are also *coalesced* over a window (`coalesce_ms`,
`ATRIUM_STREAM_COALESCE_MS`): each chunk pydantic-ai sees passes about ten async-generator
layers of its stream handling, the largest per-chunk cost of a run, and a model streaming a
chunk every 100 ms gives it twenty for a 2 s answer. See `coalesced` and
docs/decisions/0010-stream-coalescing-window.md.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from functools import cached_property
from typing import Any, TypeVar, cast

import pydantic
from openai import APIConnectionError, APIError, APITimeoutError, AsyncOpenAI, AsyncStream
from openai._base_client import make_request_options
from openai._httpx2 import request_exceptions, timeout_exceptions
from openai._streaming_cleanup import drain_response_async
from openai._types import NotGiven, Omit
from openai.resources.chat import AsyncChat
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk

T = TypeVar("T")
# The models of the chat-completions calls pydantic-ai makes: what every answer is built into.
_VALIDATED: frozenset[type[pydantic.BaseModel]] = frozenset({ChatCompletionChunk, ChatCompletion})
# Keyword arguments of `create` that are request options, not body fields.
_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


class ValidatingOpenAI(AsyncOpenAI):
    """`AsyncOpenAI` whose chat completions (and their chunks) are built by validation, and
    whose streamed chat completions skip the SDK's body transform and SSE decoder.

    `coalesce_ms`: the window over which a streamed answer's text chunks are joined (0: every
    chunk on its own, as the server sent it)."""

    def __init__(self, *, coalesce_ms: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.coalesce_seconds = coalesce_ms / 1000

    @cached_property
    def chat(self) -> AsyncChat:
        return _Chat(self)

    def _process_response_data(self, *, data: object, cast_to: type[T], response: Any) -> T:
        if isinstance(data, dict) and cast_to in _VALIDATED:
            try:
                return cast(T, cast(type[pydantic.BaseModel], cast_to).model_validate(data))
            except pydantic.ValidationError:
                pass  # the SDK's loose build below, as for any other response
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)


class _Chat(AsyncChat):
    @cached_property
    def completions(self) -> AsyncCompletions:
        return _Completions(self._client)


class _Completions(AsyncCompletions):
    async def create(self, **params: Any) -> Any:
        if params.get("stream") is not True:
            return await super().create(**params)
        given = {name: params.pop(name) for name in _OPTIONS if name in params}
        body = {k: v for k, v in params.items() if not isinstance(v, Omit | NotGiven)}
        return await self._post(
            "/chat/completions",
            body=body,
            options=make_request_options(**given, security={"bearer_auth": True}),
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=_ChunkStream,
        )


class _ChunkStream(AsyncStream[ChatCompletionChunk]):
    """The chunks of a streamed chat completion, as the SDK's `AsyncStream` yields them (the
    same `[DONE]`, error-event and transport-error handling), decoded with less Python."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        window: float = getattr(self._client, "coalesce_seconds", 0.0)
        self._iterator = self._coalesced(window) if window > 0 else self._read()

    async def _coalesced(self, window: float) -> AsyncIterator[ChatCompletionChunk]:
        try:
            async for chunk in coalesced(self._read(), window):
                yield chunk
        finally:
            await self.response.aclose()

    async def _read(self) -> AsyncGenerator[ChatCompletionChunk, None]:
        response = self.response
        try:
            async for data in self._event_data():
                if data.startswith(b"[DONE]"):
                    if response.http_version == "HTTP/1.1":  # reuse the connection
                        await drain_response_async(response)
                    break
                yield self._chunk(data)
        finally:
            await response.aclose()

    def _chunk(self, data: bytes) -> ChatCompletionChunk:
        if b'"error"' not in data:  # an error event is a JSON object with an `error` member
            try:
                return ChatCompletionChunk.model_validate_json(data)
            except pydantic.ValidationError:
                pass  # not JSON of a chunk: the SDK's loose build, or its error, below
        payload = json.loads(data)
        if isinstance(payload, dict) and payload.get("error"):
            error = payload["error"]
            message = error.get("message") if isinstance(error, dict) else None
            raise APIError(
                message=message if isinstance(message, str) and message else _STREAM_ERROR,
                request=self.response.request,
                body=error,
            )
        process = self._client._process_response_data
        return process(data=payload, cast_to=ChatCompletionChunk, response=self.response)

    async def _event_data(self) -> AsyncIterator[bytes]:
        """The `data` of each server-sent event (its `data:` lines joined by newlines)."""
        buffer, data = b"", list[bytes]()
        try:
            async for piece in self.response.aiter_bytes():
                buffer += piece
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    line = line.rstrip(b"\r")
                    if not line:  # the end of an event
                        if data:
                            yield b"\n".join(data)
                            data = []
                    elif line.startswith(b"data:"):
                        value = line[5:]
                        data.append(value[1:] if value.startswith(b" ") else value)
                    # other fields (event, id, retry) and comments: unused by chat completions
            if data:
                yield b"\n".join(data)
        except timeout_exceptions() as err:
            raise APITimeoutError(request=self.response.request) from err
        except request_exceptions() as err:
            raise APIConnectionError(request=self.response.request) from err


_STREAM_ERROR = "An error occurred during streaming"


async def coalesced(
    chunks: AsyncGenerator[ChatCompletionChunk, None], window: float
) -> AsyncIterator[ChatCompletionChunk]:
    """`chunks` with the text-only ones that follow each other within `window` seconds joined
    into one: a text chunk goes out at once when none went out in the last `window`, else it
    is held until then, and the text-only chunks of the same choice read meanwhile are added to
    it. So a text waits at most `window` (the first of an answer not at all) and at most one
    text chunk goes out per window. Anything else (a tool call's delta, a finish reason, usage,
    a refusal, reasoning, logprobs, vendor fields) goes out at once, after the held text, and
    is never joined; so does the end of the stream or its error.

    The chunks are read by a task of their own, so a held text goes out when its window ends
    even while the server is silent, and the reader of this iterator (pydantic-ai's stream
    layers) wakes once per chunk it is given, not once per chunk read.
    """
    loop = asyncio.get_running_loop()
    joiner = _Joiner(loop, window)
    reader = loop.create_task(_read_into(chunks, joiner))
    try:
        while True:
            item = await joiner.ready.get()
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            yield item
    finally:
        joiner.stop_timer()
        if not reader.done():  # the caller stopped early, or was cancelled
            reader.cancel()
            await asyncio.wait([reader])
        await chunks.aclose()


async def _read_into(chunks: AsyncGenerator[ChatCompletionChunk, None], joiner: _Joiner) -> None:
    """Read `chunks` into `joiner` up to their end or error, which goes out last."""
    try:
        async for chunk in chunks:
            joiner.take(chunk)
        joiner.release()
        joiner.ready.put_nowait(_End(None))
    except BaseException as exc:  # the reader raises it, after the text read before it
        joiner.release()
        joiner.ready.put_nowait(_End(exc))
        if not isinstance(exc, Exception):  # cancelled (the caller left, or a shutdown)
            raise


class _Joiner:
    """`coalesced`'s state: the chunks ready to go out, and the text chunk held until its
    window ends with the texts read meanwhile to join to it."""

    __slots__ = ("_held", "_held_text", "_loop", "_quiet_until", "_timer", "_window", "ready")

    def __init__(self, loop: asyncio.AbstractEventLoop, window: float) -> None:
        self._loop = loop
        self._window = window
        self.ready: asyncio.Queue[ChatCompletionChunk | _End] = asyncio.Queue()
        self._held: ChatCompletionChunk | None = None
        self._held_text: list[str] = []
        self._timer: asyncio.TimerHandle | None = None
        self._quiet_until = 0.0  # loop time: a text chunk read before then is held

    def take(self, chunk: ChatCompletionChunk) -> None:
        """One chunk read: out now, held, or joined to the held one."""
        text = _text_only(chunk)
        held = self._held
        if text is None:
            self.release()
            self.ready.put_nowait(chunk)
        elif held is not None and chunk.choices[0].index == held.choices[0].index:
            self._held_text.append(text)
        else:
            self.release()
            now = self._loop.time()
            if now >= self._quiet_until:
                self.ready.put_nowait(chunk)
                self._quiet_until = now + self._window
            else:
                self._held, self._held_text = chunk, [text]
                self._timer = self._loop.call_at(self._quiet_until, self.release)

    def release(self) -> None:
        """The held chunk out, with the texts joined to it; the next window starts."""
        self.stop_timer()
        held = self._held
        if held is not None:
            if len(self._held_text) > 1:
                held.choices[0].delta.content = "".join(self._held_text)
            self.ready.put_nowait(held)
            self._held = None
            self._quiet_until = self._loop.time() + self._window

    def stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _End:
    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


def _text_only(chunk: ChatCompletionChunk) -> str | None:
    """The text of a chunk that carries only text for one choice (what may be joined), or None."""
    choices = chunk.choices  # None from a malformed server's chunk (built the loose way)
    if not choices or len(choices) != 1 or chunk.usage is not None or chunk.moderation is not None:
        return None
    choice = choices[0]
    delta = choice.delta
    if delta is None:  # pragma: no cover - a loose build of a chunk without its delta
        return None
    content = delta.content
    if (
        not isinstance(content, str)
        or not content
        or choice.finish_reason is not None
        or choice.logprobs is not None
        or delta.tool_calls
        or delta.function_call is not None
        or delta.refusal is not None
        or delta.audio is not None
        or delta.role not in (None, "assistant")
        or chunk.model_extra
        or choice.model_extra
        or delta.model_extra
    ):
        return None
    return content
