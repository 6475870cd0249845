"""A run that can only answer makes its one model request outside the agent graph
(`runtime/answer.py`): every outcome, event and request must be what the agent graph gives.

Each case runs the same run twice, on a runtime that answers such runs with a single request
and on one that sends every run through the graph, and compares the outcomes (status, result,
error, usage, the stored messages but for the ids and clocks the graph stamps on them), the
events and text the run's sink got, and what the model was sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.usage import UsageLimits

from atrium.db.models import EventKind
from atrium.runtime.answer import _plain_text
from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.executor import RunOutcome, RunSpec, Runtime
from atrium.runtime.sink import StoredArtifact
from atrium.settings import Settings
from tests.runtime.chat_server import ANSWER, ChatServer

# What differs between any two runs (fresh ids and clocks), and what the graph stamps on
# messages and the single request does not (ids of the agent run, the model's id).
_STAMPS = {"timestamp", "run_id", "conversation_id", "model_id", "tool_call_id"}


@dataclass
class RecordingSink:
    """A run's sink that keeps what it is given; `cancel_after_text` asks for cancellation
    (as the worker would: the flag and the token) once that much text arrived."""

    cancellation: RunCancellation
    cancel_after_text: int | None = None
    seen: list[tuple[str, Any]] = field(default_factory=list)
    cancel_requested: bool = False

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        self.seen.append((kind, payload))

    def append_text(self, text: str) -> None:
        self.seen.append(("text", text))
        texts = sum(1 for kind, _ in self.seen if kind == "text")
        if self.cancel_after_text is not None and texts >= self.cancel_after_text:
            self.cancel_requested = True
            self.cancellation.cancel()

    async def checkpoint(self) -> bool:
        return self.cancel_requested

    async def write_artifact(self, *, name: str, content: bytes, mime_type: str) -> None:
        raise AssertionError("a run without tools writes no artifact")

    async def list_artifacts(self) -> list[StoredArtifact]:
        return []

    async def read_artifact(self, name: str) -> StoredArtifact | None:
        return None


@dataclass
class Recorded:
    outcome: RunOutcome
    seen: list[tuple[str, Any]]
    sent: list[list[ModelMessage]]


def _without_stamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_stamps(v) for k, v in value.items() if k not in _STAMPS}
    if isinstance(value, list | tuple):
        return [_without_stamps(v) for v in value]
    return value


def _comparable(outcome: RunOutcome) -> dict[str, Any]:
    return {
        "status": outcome.status,
        "result": outcome.result,
        "error": (outcome.error_code, outcome.error_message),
        "usage": (outcome.input_tokens, outcome.output_tokens, outcome.requests),
        "tool_calls": outcome.tool_calls,
        "messages": _without_stamps(outcome.messages),
    }


Stream = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | DeltaToolCalls]]


async def _run_both(
    stream: Stream,
    *,
    config: dict[str, Any] | None = None,
    cancel_after_text: int | None = None,
    cancelled_before: bool = False,
    **settings: Any,
) -> tuple[Recorded, Recorded]:
    recorded: list[Recorded] = []
    for single_requests in (True, False):
        sent: list[list[ModelMessage]] = []

        async def recording(
            messages: list[ModelMessage], info: AgentInfo, sent: list[Any] = sent
        ) -> AsyncIterator[Any]:
            sent.append(list(messages))
            async for item in stream(messages, info):
                yield item

        runtime = Runtime(
            Settings(_env_file=None, **settings),  # type: ignore[call-arg]
            single_requests=single_requests,
        )
        runtime.models.register("test:case", FunctionModel(stream_function=recording))
        cancellation = RunCancellation()
        sink = RecordingSink(cancellation, cancel_after_text, cancel_requested=cancelled_before)
        spec = RunSpec(
            run_id="run_1",
            prompt="hello there",
            config={"model": "test:case", "tools": [], **(config or {})},
            history=[],
        )
        try:
            outcome = await runtime.execute(spec, sink, cancellation)
        finally:
            await runtime.aclose()
        recorded.append(Recorded(outcome, sink.seen, sent))
    single, graph = recorded
    return single, graph


def _assert_same(single: Recorded, graph: Recorded) -> None:
    assert _comparable(single.outcome) == _comparable(graph.outcome)
    assert _without_stamps(single.seen) == _without_stamps(graph.seen)
    assert [_without_stamps(_dump(m)) for m in single.sent] == [
        _without_stamps(_dump(m)) for m in graph.sent
    ]


def _dump(messages: list[ModelMessage]) -> Any:
    return ModelMessagesTypeAdapter.dump_python(messages, mode="json")


async def _words(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    for word in ("a ", "plain ", "answer"):
        yield word


async def test_a_plain_answer_is_the_graphs() -> None:
    config = {"instructions": "Answer briefly.", "temperature": 0.2, "max_output_tokens": 64}
    single, graph = await _run_both(_words, config=config)
    assert single.outcome.status == "completed"
    assert single.outcome.result == "a plain answer"
    assert single.outcome.requests == 1 and single.outcome.input_tokens > 0
    assert (EventKind.STEP, {"step": "model_request", "index": 1}) in single.seen
    _assert_same(single, graph)


async def test_an_empty_answer_is_retried_as_the_graph_retries_it() -> None:
    async def empty_first(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        if len(messages) == 1:
            yield ""
            return
        async for word in _words(messages, info):
            yield word

    single, graph = await _run_both(empty_first)
    assert single.outcome.status == "completed"
    assert single.outcome.requests == 2
    assert len(single.sent) == 2  # the first answer was not asked for twice
    _assert_same(single, graph)


async def test_a_call_of_a_tool_the_run_does_not_have_goes_to_the_graph() -> None:
    async def calls_first(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {0: DeltaToolCall(name="nonexistent", json_args="{}")}
            return
        async for word in _words(messages, info):
            yield word

    single, graph = await _run_both(calls_first)
    assert single.outcome.status == "completed", single.outcome
    assert len(single.sent) == 2
    _assert_same(single, graph)


async def test_a_provider_error_fails_the_same() -> None:
    async def refused(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
        raise ModelHTTPError(status_code=429, model_name="case", body={"message": "slow down"})
        yield ""  # pragma: no cover - an async generator

    single, graph = await _run_both(refused)
    assert single.outcome.error_code == "MODEL_ERROR"
    _assert_same(single, graph)


async def test_the_token_limit_fails_the_same() -> None:
    single, graph = await _run_both(_words, run_total_tokens_limit=5)
    assert single.outcome.error_code == "USAGE_LIMIT_EXCEEDED"
    _assert_same(single, graph)


async def _slow(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "working "
    await asyncio.sleep(0.05)
    yield "still "
    await asyncio.sleep(30)
    yield "never"


async def test_the_timeout_fails_the_same() -> None:
    single, graph = await _run_both(_slow, run_timeout_seconds=0.5)
    assert single.outcome.error_code == "RUN_TIMEOUT"
    _assert_same(single, graph)


async def test_a_cancellation_during_the_answer_stops_it_the_same() -> None:
    single, graph = await _run_both(_slow, cancel_after_text=1, stream_coalesce_ms=0)
    assert single.outcome.status == "cancelled"
    _assert_same(single, graph)


async def test_a_run_cancelled_before_it_started_sends_nothing_the_same() -> None:
    """As a run cancelled while it waited for its worker: the flag is set, the token not."""
    single, graph = await _run_both(_words, cancelled_before=True)
    assert (single.outcome.status, single.sent, single.outcome.requests) == ("cancelled", [], 0)
    _assert_same(single, graph)


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    async with ChatServer() as server:
        yield server


async def test_an_openai_compatible_server_is_sent_the_same_request(
    chat_server: ChatServer,
) -> None:
    """Over the wire: the request body the graph's model request sends, byte for byte."""
    outcomes = []
    for single_requests in (True, False):
        settings = Settings(_env_file=None, llm_base_url=chat_server.base_url)  # type: ignore[call-arg]
        runtime = Runtime(settings, single_requests=single_requests)
        cancellation = RunCancellation()
        config = {
            "model": "openai-compatible:local-llm",
            "tools": [],
            "instructions": "Answer briefly.",
            "temperature": 0.7,
            "max_output_tokens": 128,
        }
        spec = RunSpec(run_id="run_1", prompt="hello", config=config, history=[])
        outcomes.append(await runtime.execute(spec, RecordingSink(cancellation), cancellation))
        await runtime.aclose()
    single, graph = outcomes
    assert single.status == "completed" and single.result is not None
    assert str(single.result).strip() == ANSWER
    assert _comparable(single) == _comparable(graph)
    first, second = chat_server.requests
    assert first == second
    assert first["messages"][0] == {"role": "system", "content": "Answer briefly."}


def test_a_response_with_text_only_is_plain() -> None:
    """The boundary the cases above cross: the single request keeps only text answers."""
    limits = UsageLimits(total_tokens_limit=100)
    assert _plain_text(ModelResponse(parts=[TextPart("a"), TextPart("b")]), limits) == "ab"
    assert _plain_text(ModelResponse(parts=[TextPart("")]), limits) is None
    assert _plain_text(ModelResponse(parts=[]), limits) is None
