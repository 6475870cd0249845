"""The SDK client of `openai-compatible:` models builds chunks by validation, loosely otherwise.

Over the wire the models are tested in `test_openai_compatible.py`; here, the two ways a chunk
is built: a valid one by pydantic's validation (the fast way, issue 20), and one that does not
validate (a slightly malformed server) the SDK's loose way, as before, instead of an error.
"""

from __future__ import annotations

from typing import Any

import httpx2
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
