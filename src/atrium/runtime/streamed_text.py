"""A run's model, streamed: the text of each response reaches the run's sink as it arrives.

pydantic-ai streams a response to a caller through `node.stream()`, whose `AgentStream` passes
each event through seven async layers (the model pull, usage checks, the event buffer, event
dispatch, each capability's stream wrapper, the shared pull), two of them taking an anyio lock
that yields to the event loop on every event, and runs the request in a task of its own.
A run's events only need the text, and the text is in the model's own `StreamedResponse`: the
agent graph calls `request` (the non-streamed path, which runs the same hooks, limits and
output handling on the complete response), and this wrapper answers it by reading the wrapped
model's stream itself: a third less CPU for a run's agent loop with a 20-chunk answer
(docs/decisions/0004-text-from-the-models-own-stream.md).
"""

from __future__ import annotations

from dataclasses import replace

from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

from atrium.runtime.sink import RunSink


class StreamedText(WrapperModel):
    """`model` for one run: every request streams, and its text goes to `sink` on the way.

    `first`: a response already received (the run's single request, `runtime/answer.py`), the
    answer to the run's first request, which then asks the model nothing.
    `interrupted`: what a response stopped partway (the run cancelled) had streamed: the agent
    graph keeps nothing of a request it did not finish, and an interrupted run's thread keeps
    what it produced (docs/guide/threads.md)."""

    def __init__(self, model: Model, sink: RunSink) -> None:
        super().__init__(model)
        self.sink = sink
        self.first: ModelResponse | None = None
        self.interrupted: ModelResponse | None = None

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        if self.first is not None:
            first, self.first = self.first, None
            return first
        async with self.wrapped.request_stream(
            messages, model_settings, model_request_parameters
        ) as response:
            try:
                async for event in response:
                    text = _text_of(event)
                    if text:
                        self.sink.append_text(text)
            except BaseException:
                self.interrupted = replace(response.get(), state="interrupted")
                raise
        return response.get()


def _text_of(event: ModelResponseStreamEvent) -> str | None:
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    return None
