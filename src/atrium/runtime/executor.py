"""One run of an agent with pydantic-ai: the loop, its events, its limits and its outcome.

The executor holds no database transaction: everything it produces goes to the `RunSink`,
which the worker persists in short transactions between (and during) model calls.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic_ai import Agent
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
    ModelRequest,
    UserContent,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRun
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset
from pydantic_ai.usage import RunUsage, UsageLimits

from atrium.agents.config import AgentConfig
from atrium.agents.tool_config import FunctionTool, McpServerTool, stored_tools
from atrium.db.models import EventKind, RunStatus
from atrium.files.model_input import ModelInput
from atrium.kit.json_object import JsonObject
from atrium.outbound.public_targets import TargetRefused
from atrium.providers.targets import ProviderTarget
from atrium.runtime import compaction
from atrium.runtime.answer import Answer, answer
from atrium.runtime.artifact_tools import TOOLS, RunDeps
from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.deferred import Resume, denial_text, function_toolset, pending_calls
from atrium.runtime.input_files import READ_FILE
from atrium.runtime.llm_models import ModelRegistry, ModelUnavailable
from atrium.runtime.lost_calls import LostCall, UnrepeatableCall, refuse_repeats
from atrium.runtime.mcp_servers import McpServers
from atrium.runtime.memory_tools import memory_toolset, waits
from atrium.runtime.observed_calls import (
    ObservedToolset,
    RunToolset,
    ToolCallLog,
    ToolFailure,
    wire_call_id,
)
from atrium.runtime.output import StructuredOutput
from atrium.runtime.sink import MemoryStore, RunSink
from atrium.runtime.streamed_text import StreamedText
from atrium.runtime.tool_errors import ToolErrorLimit, ToolErrors
from atrium.runtime.waited_calls import PendingCall
from atrium.settings import Settings

log = logging.getLogger("atrium.runtime")
_MAX_ERROR_MESSAGE = 1_000
# pydantic-ai takes a positive timeout; a run whose single request left it less times out.
_LEAST_TIMEOUT = 0.001


@dataclass(frozen=True, slots=True)
class RunSpec:
    """What to execute: ids, the prompt, the agent's config snapshot and the thread history."""

    run_id: str
    prompt: str
    config: AgentConfig
    history: list[ModelMessage]
    # Set when the run waited for its caller and is now answered (`requires_action`).
    resume: Resume | None = None
    # Set when the model is a named provider's (`openai-compatible:<provider>/<model>`).
    target: ProviderTarget | None = None
    # MCP calls of earlier attempts whose worker was lost, since the state the run starts from.
    lost_calls: tuple[LostCall, ...] = ()
    # The run's input parts after the prompt, and the files among them (`files.model_input`).
    given: ModelInput = field(default_factory=ModelInput)
    # The account's memory, for an agent with `config.memory` (`runtime.memory_tools`).
    memory_store: MemoryStore | None = None

    def user_prompt(self) -> str | list[UserContent]:
        """The run's user message: the prompt, then its input parts."""
        return [self.prompt, *self.given.content] if self.given.content else self.prompt


@dataclass(slots=True)
class RunOutcome:
    status: RunStatus  # a terminal one, or requires_action (the run waits for its caller)
    # Text, or the JSON object of a run with an output schema.
    result: str | JsonObject | None = None
    error_code: str | None = None
    error_message: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    messages: list[Any] | None = field(default=None)
    # requires_action: the calls the run waits for (`required_action.tool_calls`).
    pending: list[PendingCall] | None = None


class _CancelRequested(Exception):
    """The run's cancellation was seen at a step boundary."""


# What ends a run early with an outcome (`Runtime._ended`); anything else is the worker's.
_RUN_ENDINGS = (
    _CancelRequested,
    RunCancelled,
    ToolFailure,
    ToolErrorLimit,
    UnrepeatableCall,
    UsageLimitExceeded,
    ModelAPIError,
    UnexpectedModelBehavior,
    ModelUnavailable,
    UserError,
    TargetRefused,
)
_FAILURE_CODES: tuple[tuple[type[Exception], str], ...] = (
    (ToolFailure, "TOOL_ERROR"),
    (ToolErrorLimit, "TOOL_ERROR_LIMIT"),
    (UnrepeatableCall, "TOOL_OUTCOME_UNKNOWN"),
    (UsageLimitExceeded, "USAGE_LIMIT_EXCEEDED"),
    (ModelUnavailable, "MODEL_UNAVAILABLE"),
    (UserError, "MODEL_UNAVAILABLE"),
)


@dataclass(slots=True)
class _Attempt:
    """What `Runtime._execute` needs when a run ends early: the calls made, the agent run
    (its usage), the structured output (its last error)."""

    log: ToolCallLog
    agent_run: AgentRun[RunDeps, Any] | None = None
    structured: StructuredOutput | None = None
    # The run's model: the response it was streaming when the run was cancelled.
    streamed: StreamedText | None = None


@dataclass(frozen=True, slots=True)
class _Plan:
    """The run's tools, output type and history, from its agent's config and its earlier part."""

    tools: list[Any]
    servers: list[McpServerTool]
    structured: StructuredOutput | None
    output_type: Any
    local: list[AbstractToolset[RunDeps]]
    history: list[ModelMessage]
    answers: DeferredToolResults | None


@dataclass(frozen=True, slots=True)
class _Request:
    """What every model request of a run is sent with, and the run's limits."""

    instructions: str | None
    model_settings: ModelSettings
    limits: UsageLimits
    timeout: float

    def within(self, seconds: float) -> _Request:
        """The same, with the time left (pydantic-ai takes a positive timeout)."""
        return replace(self, timeout=max(seconds, _LEAST_TIMEOUT))


def history_from_json(stored: list[list[Any]]) -> list[ModelMessage]:
    """The thread's earlier messages, from each of its runs' stored JSON, in order. A run
    interrupted by a later prompt may end on tool calls nobody will answer (a waiting run's,
    a stream cut short): `repair_messages` answers each with a marked synthetic result, so the
    history stays one a provider (and pydantic-ai, before a new prompt) accepts."""
    flat = [message for messages in stored for message in messages]
    return repair_messages(ModelMessagesTypeAdapter.validate_python(flat)) if flat else []


class Runtime:
    """Builds pydantic-ai agents from agent configs and executes runs with them."""

    def __init__(self, settings: Settings, *, single_requests: bool = True) -> None:
        """`single_requests`: a run that can only answer makes its one request outside the
        agent graph (`runtime/answer.py`); False sends every run through the graph (the tests
        compare both ways)."""
        self.settings = settings
        self.single_requests = single_requests
        self.models = ModelRegistry(settings)
        self.mcp = McpServers.of(settings)
        # One agent for every run: its model (`StreamedText` over the registry's, which bounds
        # what it holds: docs/decisions/0019-bounded-model-cache.md), tools and output type are
        # given per run (`iter(model=…, toolsets=…, output_type=…)`), so nothing here grows
        # with the names keys use.
        self._agent = Agent[RunDeps, str](deps_type=RunDeps, output_type=str, name="atrium")

    async def aclose(self) -> None:
        await self.models.aclose()

    async def execute(
        self, spec: RunSpec, sink: RunSink, cancellation: RunCancellation
    ) -> RunOutcome:
        """Run the agent to an outcome; provider, tool and limit errors become a failed outcome.

        A call of a function tool, or of an MCP tool that needs approval, ends this part of the
        run with a `requires_action` outcome (`runtime.deferred`); `spec.resume` continues it."""
        if spec.target is None:
            return await self._execute(spec, sink, cancellation, None)
        await self.models.load(str(spec.config.get("model")))
        async with self.models.named.model(spec.target) as model:
            return await self._execute(spec, sink, cancellation, model)

    async def summarise(
        self,
        config: AgentConfig,
        target: ProviderTarget | None,
        text: str,
        cancellation: RunCancellation | None = None,
    ) -> compaction.Summary:
        """Compaction's summarising request, on the model a run with `config` would use, as
        a run's request is: stopped by the run's `cancellation`, bounded by the run timeout,
        raising what a run's request raises (`outcome_of` turns that into the run's end)."""
        token = cancellation or RunCancellation()
        seconds = self.settings.run_timeout_seconds
        summary: compaction.Summary | None = None
        with token.scope(seconds=seconds) as scope:
            summary = await self._summary(config, target, text)
        if summary is None or scope.cancelled_caught:
            if token.cancelled:
                raise RunCancelled("the run was cancelled")
            raise RunTimedOut(f"the run took longer than {seconds} s")
        return summary

    async def _summary(
        self, config: AgentConfig, target: ProviderTarget | None, text: str
    ) -> compaction.Summary:
        if target is None:
            return await compaction.summarise(await self._resolved_model(config), text)
        await self.models.load(str(config.get("model")))
        async with self.models.named.model(target) as model:
            return await compaction.summarise(model, text)

    def outcome_of(self, exc: Exception) -> RunOutcome | None:
        """How a run ends when `exc` stops it before its agent runs (compaction's request):
        as the same error inside the agent would end it. None: not a run's ending (a bug)."""
        return self._ended(exc, None) if isinstance(exc, _RUN_ENDINGS) else None

    async def _execute(
        self, spec: RunSpec, sink: RunSink, cancellation: RunCancellation, named: Model | None
    ) -> RunOutcome:
        """`execute`, on `named` (the model of the run's named provider) when it is given."""
        resume = spec.resume
        attempt = _Attempt(ToolCallLog(sink, count=resume.tool_call_count if resume else 0))
        try:
            return await self._attempt(spec, sink, cancellation, named, attempt)
        except _RUN_ENDINGS as exc:
            outcome = self._ended(exc, attempt.structured)
        if outcome.status == RunStatus.CANCELLED:
            outcome.messages = _produced_so_far(spec, attempt)
        _count_usage(outcome, attempt.agent_run, resume)
        outcome.tool_calls = attempt.log.count
        return outcome

    async def _attempt(
        self,
        spec: RunSpec,
        sink: RunSink,
        cancellation: RunCancellation,
        named: Model | None,
        attempt: _Attempt,
    ) -> RunOutcome:
        """The run's outcome when nothing ends it early: a single request where that answers
        it, else the agent graph; `attempt` keeps what the caller needs if something does."""
        plan = _plan(spec, attempt.log)
        attempt.structured = plan.structured
        if named is None:
            named = await self._resolved_model(spec.config)
        streamed = attempt.streamed = StreamedText(named, sink)
        request = self._request(spec.config)
        answered = self.single_requests and not (
            plan.tools
            or plan.structured
            or plan.history
            or spec.given.content
            or spec.config.get("memory")
        )
        if answered:  # first in its thread, not resumed (a resumed run has tools)
            single, timeout = await self._single_request(
                spec.prompt, streamed, sink, request, cancellation
            )
            if single.text is not None:
                return _answered(single)
            streamed.first = single.response
            # The graph takes over the run, within what is left of its time.
            request = request.within(timeout)
        return await self._run_graph(
            spec, sink, cancellation, streamed, plan, request, attempt, announced=answered
        )

    async def _resolved_model(self, config: AgentConfig) -> Model:
        """The model named in the agent's config (the offline one when it names none)."""
        model = str(config.get("model") or "atrium:offline")
        await self.models.load(model)
        return self.models.resolve(model)

    def _request(self, config: AgentConfig) -> _Request:
        """What every model request of the run is sent with, and the run's limits."""
        return _Request(
            instructions=config.get("instructions") or None,
            model_settings=self._model_settings(config),
            limits=UsageLimits(
                request_limit=self.settings.run_request_limit,
                total_tokens_limit=self.settings.run_total_tokens_limit,
            ),
            timeout=self.settings.run_timeout_seconds,
        )

    async def _single_request(
        self,
        prompt: str,
        streamed: StreamedText,
        sink: RunSink,
        request: _Request,
        cancellation: RunCancellation,
    ) -> tuple[Answer, float]:
        """The run's one request outside the graph (`runtime/answer.py`), announced as its
        first step, and the seconds of the run's time it left."""
        if await sink.checkpoint():
            raise _CancelRequested
        sink.emit(EventKind.STEP, {"step": "model_request", "index": 1})
        started = time.monotonic()
        single = await answer(
            streamed,
            prompt,
            instructions=request.instructions,
            model_settings=request.model_settings,
            limits=request.limits,
            seconds=request.timeout,
            cancellation=cancellation,
        )
        if await sink.checkpoint():
            raise _CancelRequested
        return single, request.timeout - (time.monotonic() - started)

    async def _run_graph(
        self,
        spec: RunSpec,
        sink: RunSink,
        cancellation: RunCancellation,
        streamed: StreamedText,
        plan: _Plan,
        request: _Request,
        attempt: _Attempt,
        *,
        announced: bool,
    ) -> RunOutcome:
        """The run through pydantic-ai's agent graph, with its MCP servers' tools open: it
        completes, or waits for its caller on deferred calls."""
        resume = spec.resume
        async with (
            self.mcp.toolsets(plan.servers, attempt.log) as remote,
            self._agent.iter(
                None if resume is not None else spec.user_prompt(),
                model=streamed,
                output_type=plan.output_type,
                toolsets=[
                    RunToolset([*plan.local, *remote], structured=plan.structured is not None)
                ],
                message_history=plan.history or None,
                deferred_tool_results=plan.answers,
                usage=None if resume is None else _usage_before(resume),
                deps=self._deps(spec, sink),
                instructions=request.instructions,
                model_settings=request.model_settings,
                usage_limits=request.limits,
                timeout=request.timeout,
                cancellation_token=cancellation,
                infer_name=False,
            ) as agent_run,
        ):
            attempt.agent_run = agent_run
            await self._drive(
                agent_run, sink, requests=resume.requests if resume else 0, announced=announced
            )
            result = agent_run.result
        output = "" if result is None else result.output
        if isinstance(output, DeferredToolRequests):
            return self._waiting(agent_run, output, attempt.log, skip=len(spec.history))
        return _completed(agent_run, output, attempt.log, skip=len(spec.history))

    def _deps(self, spec: RunSpec, sink: RunSink) -> RunDeps:
        return RunDeps(
            run_id=spec.run_id,
            sink=sink,
            max_artifact_bytes=self.settings.artifact_max_bytes,
            max_artifacts=self.settings.artifact_max_per_run,
            written=set(),
            files=spec.given.files,
            memory=spec.config.get("memory"),
            memory_store=spec.memory_store,
        )

    def _ended(self, exc: Exception, structured: StructuredOutput | None) -> RunOutcome:
        """The outcome of a run that a cancellation, a limit, a tool or its model ended.

        The order matters: a `RunTimedOut` is a `RunCancelled`, a `ModelHTTPError` a
        `ModelAPIError`."""
        if isinstance(exc, RunTimedOut):
            seconds = self.settings.run_timeout_seconds
            return _failed("RUN_TIMEOUT", f"the run took longer than {seconds} s")
        if isinstance(exc, _CancelRequested | RunCancelled):
            return RunOutcome(status=RunStatus.CANCELLED)
        if isinstance(exc, ModelHTTPError):
            return _failed(
                "MODEL_ERROR", f"the model provider answered HTTP {exc.status_code}: {exc.body}"
            )
        if isinstance(exc, UnexpectedModelBehavior):
            return _unexpected(exc, structured)
        if isinstance(exc, ModelAPIError):
            return _failed("MODEL_ERROR", f"the model provider failed: {exc}")
        if isinstance(exc, TargetRefused):  # a named provider's address, refused on connecting
            return _failed("MODEL_UNAVAILABLE", f"the model provider's address: {exc}")
        code = next(code for kind, code in _FAILURE_CODES if isinstance(exc, kind))
        return _failed(code, str(exc))

    def _waiting(
        self,
        agent_run: AgentRun[RunDeps, Any],
        requests: DeferredToolRequests,
        log: ToolCallLog,
        *,
        skip: int,
    ) -> RunOutcome:
        """The run waits for its caller: its messages so far, the pending calls, its usage."""
        pending = pending_calls(requests)
        for call in pending:
            if call["kind"] == "function":  # made by the model, executed by the caller
                log.called(call["id"], call["name"], None, call["arguments"])
        outcome = RunOutcome(
            status=RunStatus.REQUIRES_ACTION,
            pending=pending,
            messages=ModelMessagesTypeAdapter.dump_python(
                agent_run.all_messages()[skip:], mode="json"
            ),
        )
        _count_usage(outcome, agent_run, None)
        outcome.tool_calls = log.count
        return outcome

    def _model_settings(self, config: AgentConfig) -> ModelSettings:
        settings = ModelSettings()
        temperature = config.get("temperature")
        if isinstance(temperature, int | float):
            settings["temperature"] = float(temperature)
        max_tokens = config.get("max_output_tokens")
        if isinstance(max_tokens, int) and max_tokens > 0:
            settings["max_tokens"] = max_tokens
        return settings

    async def _drive(
        self,
        agent_run: AgentRun[RunDeps, Any],
        sink: RunSink,
        *,
        requests: int = 0,
        announced: bool = False,
    ) -> None:
        """Walk the agent graph, turning its steps and tool calls into run events (the model's
        text goes to the sink from `StreamedText`); stop when cancelled.
        `requests`: the model requests the run made before it waited (steps go on counting).
        `announced`: the first request's step was announced (its answer was the run's single
        request's, `runtime/answer.py`)."""
        async for node in agent_run:
            if Agent.is_model_request_node(node):
                requests += 1
                if not (announced and requests == 1):
                    sink.emit(EventKind.STEP, {"step": "model_request", "index": requests})
            elif Agent.is_call_tools_node(node) and node.model_response.tool_calls:
                # Streamed only for its tool events: an answer without tool calls (a run's last
                # step) has none, and the graph runs the node without the stream's layers.
                async with node.stream(agent_run.ctx) as tool_stream:
                    async for tool_event in tool_stream:
                        _emit_tool_event(sink, tool_event)
            if await sink.checkpoint():
                raise _CancelRequested


def _plan(spec: RunSpec, log: ToolCallLog) -> _Plan:
    """The run's tools (refusing to repeat a lost MCP call), its output type (deferred calls
    among them when a call may wait for the caller) and its history with the answers."""
    config = spec.config
    tools = stored_tools(config)
    servers = [tool for tool in tools if isinstance(tool, McpServerTool)]
    refuse_repeats(spec.lost_calls, servers)
    schema = config.get("output_schema")
    structured = StructuredOutput(schema) if schema else None
    functions = [tool for tool in tools if isinstance(tool, FunctionTool)]
    memory = config.get("memory")
    deferrable = (
        bool(functions)
        or any(tool.require_approval != "never" for tool in servers)
        or (memory is not None and waits(memory))
    )
    output_type: Any = None if structured is None else structured.output_type()
    if deferrable:
        output_type = [output_type or str, DeferredToolRequests]
    local: list[AbstractToolset[RunDeps]] = [ObservedToolset(builtins_of(tools), log=log)]
    if spec.given.files:
        local.append(ObservedToolset(FunctionToolset[RunDeps]([READ_FILE]), log=log))
    if functions:
        local.append(function_toolset(functions))
    if memory is not None:
        local.append(memory_toolset(memory, log))
    history, answers = spec.history, None
    if spec.resume is not None:
        resumed = _with_input(spec, ModelMessagesTypeAdapter.validate_python(spec.resume.messages))
        history = [*history, *resumed]
        # Announced first: an answer that ends the run shows in its events too.
        _announce_answers(log, spec.resume)
        log.errors = ToolErrors.of(tools, resumed)
        answers = spec.resume.results(resumed, log.errors)
    else:
        log.errors = ToolErrors.of(tools)
    return _Plan(tools, servers, structured, output_type, local, history, answers)


def _produced_so_far(spec: RunSpec, attempt: _Attempt) -> list[Any]:
    """What a cancelled run had produced: its prompt, the steps it finished and the answer it
    was streaming (its thread's history keeps them when a later prompt interrupted it)."""
    messages: list[ModelMessage]
    if attempt.agent_run is not None:
        messages = attempt.agent_run.all_messages()[len(spec.history) :]
    elif spec.resume is not None:
        messages = list(ModelMessagesTypeAdapter.validate_python(spec.resume.messages))
    else:  # cancelled before the agent graph: during (or before) the single request
        messages = [ModelRequest(parts=[UserPromptPart(spec.user_prompt())])]
    partial = None if attempt.streamed is None else attempt.streamed.interrupted
    if partial is not None and partial.parts and partial not in messages:
        messages.append(partial)
    produced: list[Any] = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
    return produced


def _completed(
    agent_run: AgentRun[RunDeps, Any], output: object, log: ToolCallLog, *, skip: int
) -> RunOutcome:
    """The run answered: its output, its own messages (all of them when it waited before:
    what the thread's later runs see) and its usage."""
    outcome = RunOutcome(
        status=RunStatus.COMPLETED,
        result=output if isinstance(output, dict) else str(output),
        messages=ModelMessagesTypeAdapter.dump_python(agent_run.all_messages()[skip:], mode="json"),
    )
    _count_usage(outcome, agent_run, None)
    outcome.tool_calls = log.count
    return outcome


def _answered(single: Answer) -> RunOutcome:
    """The outcome of a run whose single request answered it (`runtime/answer.py`): what an
    agent run that made that request would report."""
    usage = single.response.usage
    return RunOutcome(
        status=RunStatus.COMPLETED,
        result=single.text,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        requests=1,
        messages=ModelMessagesTypeAdapter.dump_python(
            [single.request, single.response], mode="json"
        ),
    )


def _with_input(spec: RunSpec, resumed: list[ModelMessage]) -> list[ModelMessage]:
    """A resumed run's own messages with its input given again: its stored prompt names its
    images and documents without their bytes (`files.model_input.without_bytes`)."""
    if not spec.given.content:
        return resumed
    for message in resumed:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    part.content = spec.user_prompt()
                    return resumed
    return resumed


def builtins_of(tools: list[Any]) -> FunctionToolset[RunDeps]:
    return FunctionToolset[RunDeps]([TOOLS[t] for t in tools if isinstance(t, str)])


def _usage_before(resume: Resume) -> RunUsage:
    return RunUsage(
        input_tokens=resume.input_tokens,
        output_tokens=resume.output_tokens,
        requests=resume.requests,
    )


def _count_usage(
    outcome: RunOutcome, agent_run: AgentRun[RunDeps, Any] | None, resume: Resume | None
) -> None:
    """Usage of the whole run: the agent run's usage starts from what the run used before its
    wait, and a resumed run that failed before its agent run started keeps that."""
    if agent_run is not None:
        usage = agent_run.usage
        outcome.input_tokens = usage.input_tokens
        outcome.output_tokens = usage.output_tokens
        outcome.requests = usage.requests
    elif resume is not None:
        outcome.input_tokens = resume.input_tokens
        outcome.output_tokens = resume.output_tokens
        outcome.requests = resume.requests


def _announce_answers(log: ToolCallLog, resume: Resume) -> None:
    """`tool.returned` of each call the caller answered without the run executing anything:
    function outputs and denials (an approved call is reported when it is made)."""
    for call in resume.tool_calls:
        call_id, name, label = call["id"], call["name"], call.get("server_label")
        if call_id in resume.outputs:
            failed = call_id in resume.failed
            log.returned(call_id, name, label, resume.outputs[call_id], is_error=failed)
        elif call_id in resume.approvals and not resume.approvals[call_id][0]:
            denial = denial_text(resume.approvals[call_id][1])
            log.returned(call_id, name, label, denial, is_error=True)


def _emit_tool_event(sink: RunSink, event: object) -> None:
    if isinstance(event, FunctionToolCallEvent):
        sink.emit(
            EventKind.STEP,
            {
                "step": "tool_call",
                "tool": event.part.tool_name,
                "tool_call_id": wire_call_id(event.part.tool_call_id),
                "args": event.part.args_as_dict(),
            },
        )
    elif isinstance(event, FunctionToolResultEvent):
        sink.emit(
            EventKind.STEP,
            {
                "step": "tool_result",
                "tool": event.part.tool_name,
                "tool_call_id": wire_call_id(event.part.tool_call_id),
            },
        )


def _unexpected(exc: UnexpectedModelBehavior, structured: StructuredOutput | None) -> RunOutcome:
    if structured is not None and str(exc).startswith("Exceeded maximum output retries"):
        if structured.last_error is None:
            return _failed(
                "OUTPUT_INVALID",
                "the model did not answer with a JSON object for the output schema",
            )
        return _failed(
            "OUTPUT_INVALID",
            f"the model's answer does not match the output schema: {structured.last_error}",
        )
    return _failed("MODEL_ERROR", f"the model provider failed: {exc}")


def _failed(code: str, message: str) -> RunOutcome:
    return RunOutcome(
        status=RunStatus.FAILED, error_code=code, error_message=message[:_MAX_ERROR_MESSAGE]
    )
