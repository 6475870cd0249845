"""The calls a waiting run waits for and its caller's answers, as they are stored and shown
(docs/design.md#requires-action). Plain data, free of pydantic-ai: the API process reads and
writes them without loading the runtime (`runtime.deferred` makes and takes them)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

CallKind = Literal["function", "approval"]


class PendingCall(TypedDict):
    """A call a run waits for, as `required_action.tool_calls` shows it (and the run's answer
    row keeps it)."""

    id: str
    kind: CallKind
    name: str
    # The MCP server's label of an approval; None for a function call.
    server_label: str | None
    # The model's arguments: a JSON object, or its text when it sent something else.
    arguments: Any


class ToolOutputAnswer(TypedDict):
    tool_call_id: str
    output: Any
    # Kept only when true (`schemas.ToolOutput.is_error`).
    is_error: NotRequired[bool]


class ApprovalAnswer(TypedDict):
    tool_call_id: str
    approve: bool
    reason: str | None


class Answers(TypedDict):
    """The caller's answers to a wait, as `POST …/actions` took them (`schemas.RunActions`)."""

    tool_outputs: list[ToolOutputAnswer]
    approvals: list[ApprovalAnswer]
