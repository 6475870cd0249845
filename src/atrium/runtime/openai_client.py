"""The OpenAI SDK client of `openai-compatible:` models, with a leaner streamed chat completion.

Under `bench/streaming_bench.py` (issue 20) the SDK was a sixth of the server's CPU, in three
places this client cuts, keeping the SDK's request building, auth, retries and errors:
- *Each chunk's build.* The SDK builds every streamed chunk with its own pure-Python
  `construct_type` unless its strict validation is on: 67 µs a chunk here, against 3.4 µs for
  pydantic-core's validation of the same dict (calibration 12 ms). Strict mode would refuse the
  slightly malformed chunks some OpenAI-compatible servers send, so chunks are validated first
  and one that does not validate is built the SDK's loose way, as before.
- *The request body's transform.* `chat.completions.create` walks the whole body (every message
  of the history, every tool schema) against its TypedDicts to rename aliased keys and drop
  omitted values: 4% of the server's CPU. The chat-completion parameters have no aliased keys
  and pydantic-ai hands over plain JSON values, so a streamed create only drops the omitted ones.
- *The SSE decoding.* The SDK's decoder parses each line in Python and `json.loads` each event
  before the chunk is built; `_ChunkStream` splits the bytes into events and validates each
  chunk from its JSON text in one pydantic-core call.
Non-streamed creates (and everything else) go through the SDK unchanged.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
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
    whose streamed chat completions skip the SDK's body transform and SSE decoder."""

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
        self._iterator = self._chunks()

    async def _chunks(self) -> AsyncIterator[ChatCompletionChunk]:
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
