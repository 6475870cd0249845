"""MCP calls made by attempts of a run whose worker was lost: made at most once.

An MCP call's `tool.called` event is committed before the call leaves (`ToolCallLog.started`):
the durable mark that it may have happened. A run taken over from a lost worker starts again
from its last saved state (its start, or its last wait for its caller), so every MCP call its
lost attempts marked since then is one it would make again: its outcome unknown when no
`tool.returned` was saved, or known but lost with the attempt's progress. Unless the agent
declares the tool idempotent (`idempotent` of its MCP server), the run fails with
TOOL_OUTCOME_UNKNOWN before it asks the model anything
(docs/decisions/0040-mcp-calls-at-most-once.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from atrium.agents.tool_config import McpServerTool, declares_idempotent
from atrium.db.models import EventKind
from atrium.kit.json_object import JsonObject


class UnrepeatableCall(Exception):
    """A lost attempt's call that the run would make again: it fails with TOOL_OUTCOME_UNKNOWN."""


@dataclass(frozen=True, slots=True)
class LostCall:
    """An MCP call made by an attempt of the run whose worker was lost."""

    tool_call_id: str
    name: str
    server_label: str
    answered: bool  # its `tool.returned` was saved too


def lost_calls(events: Iterable[tuple[str, JsonObject]]) -> list[LostCall]:
    """The MCP calls among the `tool.called` and `tool.returned` events (kind, payload) of a
    run's lost attempts, in the order they were made."""
    calls: dict[str, LostCall] = {}
    for kind, payload in events:
        call_id, label = str(payload.get("tool_call_id")), payload.get("server_label")
        if kind == EventKind.TOOL_CALLED and isinstance(label, str):
            calls.pop(call_id, None)  # made again by a later attempt: that one counts
            calls[call_id] = LostCall(call_id, str(payload.get("name")), label, answered=False)
        elif kind == EventKind.TOOL_RETURNED and call_id in calls:
            calls[call_id] = replace(calls[call_id], answered=True)
    return list(calls.values())


def refuse_repeats(calls: Sequence[LostCall], servers: Sequence[McpServerTool]) -> None:
    """UnrepeatableCall naming a lost call that the agent does not declare idempotent (one
    whose outcome is unknown first)."""
    by_label = {server.server_label: server for server in servers}

    def repeatable(call: LostCall) -> bool:
        server = by_label.get(call.server_label)
        return server is not None and declares_idempotent(server, call.name)

    refused = [call for call in calls if not repeatable(call)]
    if not refused:
        return
    call = min(refused, key=lambda each: each.answered)
    shown = f"tool call {call.tool_call_id} ({call.server_label}_{call.name})"
    why = (
        "ran in an attempt whose worker was lost, and the run would start again from before it"
        if call.answered
        else "was at its MCP server when the run's worker was lost: whether it took effect is "
        "unknown"
    )
    raise UnrepeatableCall(
        f"{shown} {why}; it is not sent again, since {call.server_label} does not declare "
        f"{call.name!r} idempotent"
    )
