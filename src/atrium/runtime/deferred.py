"""Runs that wait for their caller (docs/design.md#requires-action), with pydantic-ai's
deferred tools.

- A function tool (`{"type": "function"}`) is an `ExternalToolset` tool: when the model calls
  it, pydantic-ai ends the agent run with `DeferredToolRequests.calls`.
- An MCP tool under `require_approval` raises `ApprovalRequired` until the call is approved:
  the run ends with `DeferredToolRequests.approvals`, the server is not called.

The run then waits (`requires_action`) with its messages so far and the pending calls in the
database. When the caller answers, any worker resumes it: the same messages, and the answers
as `DeferredToolResults` (an output for each function call, `ToolApproved` or `ToolDenied` for
each approval), so pydantic-ai continues from the pending calls as if it had never stopped. An
output the caller marks `is_error` is a failed call: `ToolFailed` for the model, or the end of
the run, as the function's `on_error` says (`runtime/tool_errors.py`).

The caller sees and answers each call by its `wire_call_id` (`runtime.observed_calls`); the answers
go back to pydantic-ai under the model's own ids, found in the run's messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ApprovalRequired, ToolFailed
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    ToolApproved,
    ToolDefinition,
    ToolDenied,
)
from pydantic_ai.toolsets import ExternalToolset, ToolsetTool, WrapperToolset

from atrium.agents.tool_config import ApprovalList, FunctionTool, McpServerTool
from atrium.kit.json_object import JsonObject
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.observed_calls import ToolFailure, wire_call_id
from atrium.runtime.tool_errors import ToolErrors
from atrium.runtime.waited_calls import Answers, PendingCall

_META_LABEL: Final = "server_label"
_META_NAME: Final = "name"


def denial_text(reason: str | None) -> str:
    """What the model reads for a denied call: "denied: <reason>", or "denied"."""
    reason = (reason or "").strip()
    return f"denied: {reason}" if reason else "denied"


def needs_approval(tool: McpServerTool, name: str) -> bool:
    """Whether a call of the server's tool `name` waits for the caller's approval."""
    rule = tool.require_approval
    if isinstance(rule, ApprovalList):
        return name in rule.always
    return rule == "always"


def function_toolset(tools: list[FunctionTool]) -> ExternalToolset[RunDeps]:
    """The caller's functions as tools the model may call and pydantic-ai defers."""
    return ExternalToolset(
        [
            ToolDefinition(
                name=tool.name,
                description=tool.description or None,
                parameters_json_schema=tool.parameters,
            )
            for tool in tools
        ],
        id="functions",
    )


@dataclass(kw_only=True)
class ApprovalToolset(WrapperToolset[RunDeps]):
    """An MCP server's tools, some of which are called only once the caller approved the call.

    Wrap it outside `ObservedToolset`: a call waiting for approval is not a call yet (no
    `tool.called` event, not billed, the server not reached)."""

    server: McpServerTool

    async def call_tool(
        self,
        name: str,
        tool_args: JsonObject,
        ctx: RunContext[RunDeps],
        tool: ToolsetTool[RunDeps],
    ) -> Any:
        if not ctx.tool_call_approved and needs_approval(self.server, name):
            # The server's label and the tool's own name travel with the pending call.
            raise ApprovalRequired(
                metadata={_META_LABEL: self.server.server_label, _META_NAME: name}
            )
        return await super().call_tool(name, tool_args, ctx, tool)


def _arguments(call: ToolCallPart) -> Any:
    try:
        return call.args_as_dict()
    except ValueError:  # the model sent arguments that are not a JSON object: show them as is
        return call.args


def pending_calls(requests: DeferredToolRequests) -> list[PendingCall]:
    """The calls a run waits for, as `required_action.tool_calls` shows them."""
    pending: list[PendingCall] = [
        {
            "id": wire_call_id(call.tool_call_id),
            "kind": "function",
            "name": call.tool_name,
            "server_label": None,
            "arguments": _arguments(call),
        }
        for call in requests.calls
    ]
    for call in requests.approvals:
        metadata = requests.metadata.get(call.tool_call_id) or {}
        pending.append(
            {
                "id": wire_call_id(call.tool_call_id),
                "kind": "approval",
                "name": str(metadata.get(_META_NAME, call.tool_name)),
                "server_label": metadata.get(_META_LABEL),
                "arguments": _arguments(call),
            }
        )
    return pending


@dataclass(frozen=True, slots=True)
class Resume:
    """A run that waited, being resumed: its state at the wait and the caller's answers."""

    # The run's own messages so far (pydantic-ai JSON), after the thread's earlier runs.
    messages: list[Any]
    # The calls it waited for (`required_action.tool_calls`) and the answers to them.
    tool_calls: list[PendingCall]
    answers: Answers
    # Usage before the wait, so limits and billing count every model request of the run.
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    tool_call_count: int = 0
    outputs: dict[str, Any] = field(init=False)
    # The function calls whose output is the error the function raised (`is_error`).
    failed: frozenset[str] = field(init=False)
    approvals: dict[str, tuple[bool, str | None]] = field(init=False)

    def __post_init__(self) -> None:
        outputs = {
            item["tool_call_id"]: item["output"] for item in self.answers.get("tool_outputs", [])
        }
        approvals = {
            item["tool_call_id"]: (bool(item["approve"]), item.get("reason"))
            for item in self.answers.get("approvals", [])
        }
        failed = frozenset(
            item["tool_call_id"]
            for item in self.answers.get("tool_outputs", [])
            if item.get("is_error")
        )
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "failed", failed)
        object.__setattr__(self, "approvals", approvals)

    def results(self, messages: Sequence[ModelMessage], errors: ToolErrors) -> DeferredToolResults:
        """The answers as pydantic-ai takes them: by the ids the model gave its calls in
        `messages` (the run's messages so far). A failed output goes back as `ToolFailed`, or
        ends the run (`ToolFailure`, or `ToolErrorLimit` from `errors`)."""
        model_ids = {
            wire_call_id(part.tool_call_id): part.tool_call_id
            for message in messages
            if isinstance(message, ModelResponse)
            for part in message.tool_calls
        }
        names = {call["id"]: str(call["name"]) for call in self.tool_calls}
        calls: dict[str, Any] = {}
        for call_id, output in self.outputs.items():
            if call_id in self.failed:
                output = self._failure(names.get(call_id, call_id), output, errors)
            calls[model_ids.get(call_id, call_id)] = output
        return DeferredToolResults(
            calls=calls,
            approvals={
                model_ids.get(call_id, call_id): (
                    ToolApproved() if approve else ToolDenied(denial_text(reason))
                )
                for call_id, (approve, reason) in self.approvals.items()
            },
        )

    @staticmethod
    def _failure(name: str, output: Any, errors: ToolErrors) -> ToolFailed:
        """A function's failed output as the model reads it, unless it ends the run."""
        text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        message = f"{name} failed: {text}"
        if not errors.goes_back(name, name, message):
            raise ToolFailure(message)
        return ToolFailed(text)
