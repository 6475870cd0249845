"""One run of an agent with pydantic-ai: the loop, its events, its limits and its outcome.

The executor holds no database transaction: everything it produces goes to the `RunSink`,
which the worker persists in short transactions between (and during) model calls.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, CancellationToken
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelHTTPError,
    RunCancelled,
    RunTimedOut,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from pydantic_ai.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.run import AgentRun
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from atrium.runs import events
from atrium.runtime.models import ModelRegistry, ModelUnavailable
from atrium.runtime.sink import RunSink
from atrium.runtime.tools import TOOLS, RunDeps
from atrium.settings import Settings

log = logging.getLogger("atrium.runtime")
_MAX_ERROR_MESSAGE = 1_000


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What to execute: ids, the prompt, the agent's config snapshot and the thread history."""

    run_id: str
    prompt: str
    config: dict[str, Any]
    history: list[ModelMessage]


@dataclass(slots=True)
class RunOutcome:
    status: str  # completed | failed | cancelled
    result: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    messages: list[Any] | None = field(default=None)


class _CancelRequested(Exception):
    """The run's cancellation was seen at a step boundary."""


def history_from_json(stored: list[list[Any]]) -> list[ModelMessage]:
    """The thread's earlier messages, from each completed run's stored JSON, in order."""
    flat = [message for messages in stored for message in messages]
    return list(ModelMessagesTypeAdapter.validate_python(flat)) if flat else []


class Runtime:
    """Builds pydantic-ai agents from agent configs and executes runs with them."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.models = ModelRegistry(settings)
        self._agents: dict[tuple[str, tuple[str, ...]], Agent[RunDeps, str]] = {}

    async def aclose(self) -> None:
        await self.models.aclose()

    def _agent(self, model_name: str, tools: tuple[str, ...]) -> Agent[RunDeps, str]:
        key = (model_name, tools)
        agent = self._agents.get(key)
        if agent is None:
            agent = Agent(
                self.models.resolve(model_name),
                deps_type=RunDeps,
                output_type=str,
                tools=[TOOLS[name] for name in tools],
                name="atrium",
            )
            self._agents[key] = agent
        return agent

    async def execute(
        self, spec: RunSpec, sink: RunSink, cancellation: CancellationToken
    ) -> RunOutcome:
        """Run the agent to an outcome; provider and limit errors become a failed outcome."""
        agent_run: AgentRun[RunDeps, str] | None = None
        try:
            config = spec.config
            tools = tuple(name for name in config.get("tools") or () if name in TOOLS)
            agent = self._agent(str(config.get("model") or "atrium:offline"), tools)
            deps = RunDeps(
                run_id=spec.run_id,
                sink=sink,
                max_artifact_bytes=self.settings.artifact_max_bytes,
                max_artifacts=self.settings.artifact_max_per_run,
                written=set(),
            )
            async with agent.iter(
                spec.prompt,
                message_history=spec.history or None,
                deps=deps,
                instructions=config.get("instructions") or None,
                model_settings=self._model_settings(config),
                usage_limits=UsageLimits(
                    request_limit=self.settings.run_request_limit,
                    total_tokens_limit=self.settings.run_total_tokens_limit,
                ),
                timeout=self.settings.run_timeout_seconds,
                cancellation_token=cancellation,
                infer_name=False,
            ) as agent_run:
                await self._drive(agent_run, sink)
                result = agent_run.result
            output = "" if result is None else str(result.output)
            outcome = RunOutcome(
                status="completed",
                result=output,
                messages=ModelMessagesTypeAdapter.dump_python(
                    agent_run.new_messages(), mode="json"
                ),
            )
        except _CancelRequested:
            outcome = RunOutcome(status="cancelled")
        except RunTimedOut:
            outcome = _failed(
                "RUN_TIMEOUT", f"the run took longer than {self.settings.run_timeout_seconds} s"
            )
        except RunCancelled:
            outcome = RunOutcome(status="cancelled")
        except UsageLimitExceeded as exc:
            outcome = _failed("USAGE_LIMIT_EXCEEDED", str(exc))
        except ModelHTTPError as exc:
            outcome = _failed(
                "MODEL_ERROR", f"the model provider answered HTTP {exc.status_code}: {exc.body}"
            )
        except (ModelAPIError, UnexpectedModelBehavior) as exc:
            outcome = _failed("MODEL_ERROR", f"the model provider failed: {exc}")
        except (ModelUnavailable, UserError) as exc:
            outcome = _failed("MODEL_UNAVAILABLE", str(exc))
        if agent_run is not None:
            usage = agent_run.usage
            outcome.input_tokens = usage.input_tokens
            outcome.output_tokens = usage.output_tokens
            outcome.requests = usage.requests
            outcome.tool_calls = usage.tool_calls
        return outcome

    def _model_settings(self, config: dict[str, Any]) -> ModelSettings:
        settings = ModelSettings()
        temperature = config.get("temperature")
        if isinstance(temperature, int | float):
            settings["temperature"] = float(temperature)
        max_tokens = config.get("max_output_tokens")
        if isinstance(max_tokens, int) and max_tokens > 0:
            settings["max_tokens"] = max_tokens
        return settings

    async def _drive(self, agent_run: AgentRun[RunDeps, str], sink: RunSink) -> None:
        """Walk the agent graph, turning its streams into run events; stop when cancelled."""
        requests = 0
        async for node in agent_run:
            if Agent.is_model_request_node(node):
                requests += 1
                sink.emit(events.STEP, {"step": "model_request", "index": requests})
                async with node.stream(agent_run.ctx) as model_stream:
                    async for event in model_stream:
                        text = _text_of(event)
                        if text:
                            sink.append_text(text)
            elif Agent.is_call_tools_node(node):
                async with node.stream(agent_run.ctx) as tool_stream:
                    async for tool_event in tool_stream:
                        _emit_tool_event(sink, tool_event)
            if await sink.checkpoint():
                raise _CancelRequested


def _text_of(event: object) -> str | None:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return None


def _emit_tool_event(sink: RunSink, event: object) -> None:
    if isinstance(event, FunctionToolCallEvent):
        sink.emit(
            events.STEP,
            {
                "step": "tool_call",
                "tool": event.part.tool_name,
                "tool_call_id": event.part.tool_call_id,
                "args": event.part.args_as_dict(),
            },
        )
    elif isinstance(event, FunctionToolResultEvent):
        sink.emit(
            events.STEP,
            {
                "step": "tool_result",
                "tool": event.part.tool_name,
                "tool_call_id": event.part.tool_call_id,
            },
        )


def _failed(code: str, message: str) -> RunOutcome:
    return RunOutcome(status="failed", error_code=code, error_message=message[:_MAX_ERROR_MESSAGE])
