"""What a failed tool call does to its run: `on_error` of its MCP server or function tool.

`"fail"` ends the run with TOOL_ERROR. `"return"` hands the error text to the model as the
call's result, through pydantic-ai's `ToolFailed` (a `ToolReturnPart` with outcome `failed`,
which providers receive on their error channel, and which spends no retry budget), and the run
goes on; the call's `tool.returned` event has `is_error: true`. A tool that fails more than
its entry's `max_consecutive_errors` times in a row ends the run with TOOL_ERROR_LIMIT.

"In a row" is per tool as the model sees it (`docs_search`), over the run's own calls: a call
of that tool that succeeds starts the count again; calls of other tools, and denied calls, do
not. A run that waited for its caller goes on counting from its messages, so a function
failing at every answer is bounded too
(docs/decisions/0049-tool-errors-to-the-model.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

from atrium.agents.tool_config import FunctionTool, McpServerTool, Tool


class ToolErrorLimit(Exception):
    """A tool failed more times in a row than its entry lets go back to the model."""


@dataclass(frozen=True, slots=True)
class _Rule:
    returns: bool  # on_error "return"
    limit: int  # max_consecutive_errors


@dataclass(slots=True)
class ToolErrors:
    """The run's `on_error` rules, by entry (a server's label, a function's name), and how many
    times in a row each tool has failed, by the name the model sees."""

    rules: dict[str, _Rule] = field(default_factory=dict)
    streaks: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, tools: Sequence[Tool], messages: Sequence[ModelMessage] = ()) -> ToolErrors:
        """The rules of the run's tools, counting from the run's own `messages` so far."""
        errors = cls(
            rules={
                tool.server_label if isinstance(tool, McpServerTool) else tool.name: _Rule(
                    tool.on_error == "return", tool.max_consecutive_errors
                )
                for tool in tools
                if isinstance(tool, McpServerTool | FunctionTool)
            }
        )
        for message in messages:
            if not isinstance(message, ModelRequest):
                continue
            for part in message.parts:
                if not isinstance(part, ToolReturnPart):
                    continue
                if part.outcome == "success":
                    errors.succeeded(part.tool_name)
                elif part.outcome == "failed":
                    errors.streaks[part.tool_name] = errors.streaks.get(part.tool_name, 0) + 1
        return errors

    def goes_back(self, entry: str | None, seen: str, message: str) -> bool:
        """Count a failed call of `seen` (a tool of `entry`; None: a built-in tool): True when
        its error goes back to the model, False when it ends the run (on_error "fail").
        ToolErrorLimit when the tool failed more times in a row than the entry allows."""
        rule = self.rules.get(entry) if entry is not None else None
        if rule is None or not rule.returns:
            return False
        streak = self.streaks.get(seen, 0) + 1
        self.streaks[seen] = streak
        if streak > rule.limit:
            raise ToolErrorLimit(
                f"{seen} failed {streak} times in a row, more than its max_consecutive_errors "
                f"({rule.limit}); the last error: {message}"
            )
        return True

    def succeeded(self, seen: str) -> None:
        """A call of `seen` answered: its next failure is the first in a row again."""
        self.streaks.pop(seen, None)
