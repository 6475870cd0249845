"""A run that can only answer: its one model request, made outside pydantic-ai's agent graph.

A run of an agent without tools and output schema, first in its thread and not resumed, is one
model request whose text is the result. The agent graph around that request (its run context,
capabilities, toolsets and instructions gathered in task groups, a task per node, the hooks)
costs as much CPU as the request itself (docs/decisions/0003-single-request-for-plain-answers.md).
So such a run sends its request through pydantic-ai's direct API, through the same model
(`StreamedText`: the text reaches the run's sink as it arrives). For a first prompt and its
instructions that is the request an agent's first model request sends, byte for byte (the
tests compare them on the wire); a thread's later runs are not taken, since the direct API
skips the model's preparation of a history.

Only a plain answer is taken as it is: text and nothing else, within the token limit. Any other
(empty, thinking only, a tool call the run cannot make, over the limit) goes to the agent graph
as its first response (`StreamedText.first`), which handles it as in any run, retries included,
without asking the model twice. Timeout and cancellation end the request as they end an agent
run, with `RunTimedOut` and `RunCancelled`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import direct
from pydantic_ai.exceptions import RunCancelled, RunTimedOut
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from atrium.kit.time import utcnow
from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.streamed_text import StreamedText


@dataclass(frozen=True, slots=True)
class Answer:
    request: ModelRequest
    response: ModelResponse
    # The run's result when the answer is plain text within the limits; else None (the agent
    # graph takes the response over).
    text: str | None


async def answer(
    model: StreamedText,
    prompt: str,
    *,
    instructions: str | None,
    model_settings: ModelSettings,
    limits: UsageLimits,
    seconds: float,
    cancellation: RunCancellation,
) -> Answer:
    """The model's answer to `prompt`; raises what an agent run's request raises."""
    request = ModelRequest(
        parts=[UserPromptPart(prompt)], instructions=instructions, timestamp=utcnow()
    )
    response: ModelResponse | None = None
    with cancellation.scope(seconds=seconds) as scope:
        response = await direct.model_request(model, [request], model_settings=model_settings)
    if response is None or scope.cancelled_caught:
        if cancellation.cancelled:
            raise RunCancelled("the run was cancelled")
        raise RunTimedOut(f"the run took longer than {seconds} s")
    return Answer(request, response, _plain_text(response, limits))


def _plain_text(response: ModelResponse, limits: UsageLimits) -> str | None:
    parts = response.parts
    if response.state != "complete" or not parts:
        return None
    if not all(isinstance(part, TextPart) for part in parts):
        return None
    text = "".join(part.content for part in parts if isinstance(part, TextPart))
    limit = limits.total_tokens_limit
    if not text or (limit is not None and response.usage.total_tokens > limit):
        return None
    return text
