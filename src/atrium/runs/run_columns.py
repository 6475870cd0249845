"""The values a move of `runs.lifecycle` writes on a run's row, by column name.

Each conditional UPDATE of the queue and of waiting runs takes these as they are (`.values(**…)`
or bound parameters), so a key is a `runs` column and a misspelt one fails the type check
rather than the statement.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, TypedDict

from atrium.db.models import CancelReason, RunStatus
from atrium.kit.json_object import JsonObject
from atrium.runtime.waited_calls import PendingCall


class RequiredActionJson(TypedDict):
    """What a waiting run waits for: its `required_action` column, shown as the API's
    `RequiredAction`."""

    type: Literal["tool_calls"]
    expires_at: str
    tool_calls: list[PendingCall]


class RunColumns(TypedDict, total=False):
    status: RunStatus
    # Text; a run with an output schema keeps its object in `result_json` instead.
    result: str | None
    result_json: JsonObject | None
    error_code: str | None
    error_message: str | None
    # The run's own messages (pydantic-ai JSON).
    messages: list[Any] | None
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int
    credits_micro: int
    finished_at: datetime | None
    cancel_reason: CancelReason
    cancel_requested: bool
    attempts: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    required_action: RequiredActionJson | None
    action_expires_at: datetime | None
    last_event_seq: int
