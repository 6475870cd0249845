"""`runtime.deferred`: the calls a waiting run shows its caller, and the caller's answers as
pydantic-ai takes them back (docs/design.md#requires-action). Runs that wait and resume over
HTTP are tests/runs/test_actions.py and tests/runtime/test_mcp_approvals.py; these pin the
mapping between the model's call ids and the ones the caller sees, on values."""

from __future__ import annotations

import pytest
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.tools import DeferredToolRequests, ToolApproved, ToolDenied

from atrium.agents.tool_config import FunctionTool
from atrium.runtime.deferred import Resume, pending_calls
from atrium.runtime.observed_calls import ToolFailure, wire_call_id
from atrium.runtime.tool_errors import ToolErrorLimit, ToolErrors
from atrium.runtime.waited_calls import Answers, PendingCall

# Longer than a call id may be on the wire: the caller sees `call_` and a digest instead.
_LONG_ID = "x" * 300


def _function(on_error: str = "fail", max_errors: int = 3) -> FunctionTool:
    return FunctionTool.model_validate(
        {
            "type": "function",
            "name": "lookup",
            "on_error": on_error,
            "max_consecutive_errors": max_errors,
        }
    )


def test_pending_calls_show_wire_ids_and_the_approvals_server() -> None:
    requests = DeferredToolRequests(
        calls=[ToolCallPart("lookup", {"q": "tea"}, tool_call_id=_LONG_ID)],
        approvals=[ToolCallPart("shop_pay", '{"amount": 3}', tool_call_id="c2")],
        metadata={"c2": {"server_label": "shop", "name": "pay"}},
    )
    expected: list[PendingCall] = [
        {
            "id": wire_call_id(_LONG_ID),
            "kind": "function",
            "name": "lookup",
            "server_label": None,
            "arguments": {"q": "tea"},
        },
        {
            "id": "c2",
            "kind": "approval",
            "name": "pay",
            "server_label": "shop",
            "arguments": {"amount": 3},
        },
    ]
    assert pending_calls(requests) == expected
    assert expected[0]["id"].startswith("call_") and len(expected[0]["id"]) == 37


def _resume(answers: Answers) -> Resume:
    calls: list[PendingCall] = [
        {
            "id": wire_call_id(_LONG_ID),
            "kind": "function",
            "name": "lookup",
            "server_label": None,
            "arguments": {},
        },
        {"id": "c2", "kind": "approval", "name": "pay", "server_label": "shop", "arguments": {}},
    ]
    return Resume(messages=[], tool_calls=calls, answers=answers)


_MESSAGES = [
    ModelResponse(
        parts=[
            ToolCallPart("lookup", {}, tool_call_id=_LONG_ID),
            ToolCallPart("shop_pay", {}, tool_call_id="c2"),
        ]
    )
]


def test_answers_go_back_under_the_models_own_ids() -> None:
    resume = _resume(
        {
            "tool_outputs": [{"tool_call_id": wire_call_id(_LONG_ID), "output": {"n": 1}}],
            "approvals": [{"tool_call_id": "c2", "approve": False, "reason": " too dear "}],
        }
    )
    results = resume.results(_MESSAGES, ToolErrors.of([_function()]))
    assert results.calls == {_LONG_ID: {"n": 1}}
    denied = results.approvals["c2"]
    assert isinstance(denied, ToolDenied) and denied.message == "denied: too dear"
    approved = _resume(
        {"tool_outputs": [], "approvals": [{"tool_call_id": "c2", "approve": True, "reason": None}]}
    ).results(_MESSAGES, ToolErrors.of([_function()]))
    assert isinstance(approved.approvals["c2"], ToolApproved)


def _failed(output: object) -> Answers:
    failed = {"tool_call_id": wire_call_id(_LONG_ID), "output": output, "is_error": True}
    return {"tool_outputs": [failed], "approvals": []}


def test_a_failed_output_goes_to_the_model_when_its_function_returns_errors() -> None:
    results = _resume(_failed({"code": 7})).results(
        _MESSAGES, ToolErrors.of([_function(on_error="return")])
    )
    failed = results.calls[_LONG_ID]
    assert isinstance(failed, ToolFailed) and failed.message == '{"code": 7}'


def test_a_failed_output_ends_the_run_when_its_function_fails_runs() -> None:
    with pytest.raises(ToolFailure, match="lookup failed: timeout"):
        _resume(_failed("timeout")).results(_MESSAGES, ToolErrors.of([_function()]))


def test_failures_in_a_row_past_the_limit_end_the_run() -> None:
    errors = ToolErrors.of([_function(on_error="return", max_errors=1)])
    _resume(_failed("once")).results(_MESSAGES, errors)
    with pytest.raises(ToolErrorLimit, match="lookup failed 2 times in a row"):
        _resume(_failed("twice")).results(_MESSAGES, errors)
