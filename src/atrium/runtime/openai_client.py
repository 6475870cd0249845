"""The OpenAI SDK client of `openai-compatible:` models, with a cheaper build of each chunk.

The SDK turns every streamed chunk into a `ChatCompletionChunk` with its own pure-Python
`construct_type` unless its strict validation is on: 67 µs a chunk here, against 3.4 µs for
pydantic-core's validation of the same dict (calibration 12 ms). With 20 chunks per answer it
was 8% of the server's CPU in `bench/streaming_bench.py` (issue 20). Strict mode would refuse
the slightly malformed chunks some OpenAI-compatible servers send, so this client validates
first and builds a chunk that does not validate the SDK's loose way, as before.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

import pydantic
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion, ChatCompletionChunk

T = TypeVar("T")
# The models of the chat-completions calls pydantic-ai makes: what every answer is built into.
_VALIDATED: frozenset[type[pydantic.BaseModel]] = frozenset({ChatCompletionChunk, ChatCompletion})


class ValidatingOpenAI(AsyncOpenAI):
    """`AsyncOpenAI` whose chat completions (and their chunks) are built by validation."""

    def _process_response_data(self, *, data: object, cast_to: type[T], response: Any) -> T:
        if isinstance(data, dict) and cast_to in _VALIDATED:
            try:
                return cast(T, cast(type[pydantic.BaseModel], cast_to).model_validate(data))
            except pydantic.ValidationError:
                pass  # the SDK's loose build below, as for any other response
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)
