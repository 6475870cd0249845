"""`runtime.lost_calls`: which MCP calls of a run's lost attempts would be made again, and which
of them the run refuses to repeat (docs/decisions/0040-mcp-calls-at-most-once.md). The
end-to-end cases (real workers killed mid-call) are tests/worker/test_mcp_calls_at_most_once.py;
these pin the rules on event lists."""

from __future__ import annotations

from typing import Any

import pytest

from atrium.agents.tool_config import McpServerTool
from atrium.db.models import EventKind
from atrium.kit.json_object import JsonObject
from atrium.runtime.lost_calls import LostCall, UnrepeatableCall, lost_calls, refuse_repeats


def _called(call_id: str, name: str = "book", label: str | None = "shop") -> tuple[str, JsonObject]:
    return EventKind.TOOL_CALLED, {"tool_call_id": call_id, "name": name, "server_label": label}


def _returned(call_id: str) -> tuple[str, JsonObject]:
    return EventKind.TOOL_RETURNED, {"tool_call_id": call_id, "output": "ok"}


def _server(label: str = "shop", idempotent: Any = False) -> McpServerTool:
    return McpServerTool.model_validate(
        {
            "type": "mcp",
            "server_label": label,
            "server_url": "https://mcp.example.test/mcp",
            "idempotent": idempotent,
        }
    )


def test_only_mcp_calls_count_in_the_order_they_were_made() -> None:
    events = [
        _called("c1"),
        _called("f1", name="write_artifact", label=None),  # a built-in tool: no server
        _returned("f1"),
        _called("c2", name="pay"),
        _returned("c1"),
    ]
    assert lost_calls(events) == [
        LostCall("c1", "book", "shop", answered=True),
        LostCall("c2", "pay", "shop", answered=False),
    ]


def test_a_call_made_again_by_a_later_attempt_counts_as_that_one() -> None:
    events = [_called("c1"), _returned("c1"), _called("c2"), _called("c1")]
    assert lost_calls(events) == [
        LostCall("c2", "book", "shop", answered=False),
        LostCall("c1", "book", "shop", answered=False),
    ]


def test_a_return_without_its_call_is_ignored() -> None:
    assert lost_calls([_returned("c9")]) == []


def test_idempotent_calls_may_be_repeated() -> None:
    calls = lost_calls([_called("c1"), _called("c2", name="search")])
    refuse_repeats(calls, [_server(idempotent=True)])
    refuse_repeats(calls, [_server(idempotent=["book", "search"])])


def test_the_unknown_outcome_is_named_before_an_answered_call() -> None:
    calls = lost_calls([_called("c1"), _returned("c1"), _called("c2", name="pay")])
    with pytest.raises(UnrepeatableCall) as raised:
        refuse_repeats(calls, [_server(idempotent=["book"])])
    assert str(raised.value).startswith("tool call c2 (shop_pay) was at its MCP server")
    with pytest.raises(UnrepeatableCall) as raised:
        refuse_repeats(calls[:1], [_server()])
    assert "tool call c1 (shop_book) ran in an attempt whose worker was lost" in str(raised.value)


def test_a_call_to_a_server_the_agent_no_longer_has_is_refused() -> None:
    calls = lost_calls([_called("c1", label="gone")])
    with pytest.raises(UnrepeatableCall, match="gone does not declare 'book' idempotent"):
        refuse_repeats(calls, [_server(idempotent=True)])
