"""Every tool call of a run, built-in or remote: its events and its count.

`tool.called` `{tool_call_id, name, server_label, arguments}` goes out when a tool is called,
`tool.returned` `{tool_call_id, name, server_label, output, is_error}` when it answers, fails,
or asks the model to retry (whether a failure ends the run: `runtime/tool_errors.py`); `name`
is the tool's own name (`search`, not the `docs_search` the model sees), `server_label` its MCP
server's label or null. Both carry the label, so either
names the tool as the model sees it: a denied approval's `tool.returned` has no call before it.
Billing's `tool_calls` is the number of `tool.called` events: every call counts, failed ones
too.

Events and `required_action` name a call by its `wire_call_id`: the model's own id when it is
short and plain, else a short id made from it, which the caller answers with (the model still
gets its own id back: the run's messages keep it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Final

import pydantic_core
from pydantic_ai import ModelRetry, RunContext, ToolFailed
from pydantic_ai.exceptions import UserError
from pydantic_ai.toolsets import CombinedToolset, ToolsetTool, WrapperToolset

from atrium.agents.tool_config import OUTPUT_TOOL_NAME
from atrium.db.models import EventKind
from atrium.kit.json_depth import TOO_DEEP, too_deep
from atrium.kit.json_object import JsonObject
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.sink import RunSink
from atrium.runtime.tool_errors import ToolErrors

MAX_OUTPUT_BYTES: Final = 4_096
_TRUNCATED: Final = " … [truncated]"
# How pydantic-ai names the tool in its "conflicts with existing tool" error.
_CONFLICT_NAME = re.compile(r"conflicts with existing tool from .*: '([^']*)'")
# Model call ids shown as they are: OpenAI's `call_…`, Anthropic's `toolu_…`, `functions.f:0`.
# Any other (an answer's `tool_call_id` has at most 200 characters; `atrium runs act --output
# ID=TEXT` splits at the first `=`) is shown as `call_` and 32 hex digits of its SHA-256
# (docs/decisions/0043-reserved-tool-names-and-long-call-ids.md).
_PLAIN_CALL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


class ToolFailure(Exception):
    """A tool that cannot answer (unreachable, too slow, failed): the run fails with TOOL_ERROR,
    or a call's error goes back to the model (`on_error: "return"`)."""


def wire_call_id(call_id: str) -> str:
    """The id a call is shown and answered by; the same for the same model id, and its own
    wire id for a wire id."""
    if _PLAIN_CALL_ID.fullmatch(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode(errors="surrogatepass")).hexdigest()
    return f"call_{digest[:32]}"


def shown_output(output: object) -> str:
    """A tool's output as an event shows it: text, at most 4 KB of UTF-8."""
    text = output if isinstance(output, str) else pydantic_core.to_json(output, fallback=str)
    data = text.encode() if isinstance(text, str) else text
    if len(data) <= MAX_OUTPUT_BYTES:
        return data.decode(errors="replace")
    room = MAX_OUTPUT_BYTES - len(_TRUNCATED.encode())
    return data[:room].decode(errors="ignore") + _TRUNCATED


@dataclass(slots=True)
class ToolCallLog:
    """The run's tool calls: their events go to the sink, their number to billing; `errors`
    says which failures go back to the model."""

    sink: RunSink
    count: int = 0
    errors: ToolErrors = field(default_factory=ToolErrors)

    def called(self, call_id: str, name: str, server_label: str | None, args: object) -> None:
        self.count += 1
        self.sink.emit(
            EventKind.TOOL_CALLED,
            {
                "tool_call_id": wire_call_id(call_id),
                "name": name,
                "server_label": server_label,
                "arguments": args,
            },
        )

    async def started(
        self, call_id: str, name: str, server_label: str | None, args: object
    ) -> None:
        """`called`, committed: the mark that the call may have happened, before it leaves
        (docs/decisions/0040-mcp-calls-at-most-once.md)."""
        self.called(call_id, name, server_label, args)
        await self.sink.persist()

    def returned(
        self,
        call_id: str,
        name: str,
        server_label: str | None,
        output: object,
        *,
        is_error: bool,
    ) -> None:
        self.sink.emit(
            EventKind.TOOL_RETURNED,
            {
                "tool_call_id": wire_call_id(call_id),
                "name": name,
                "server_label": server_label,
                "output": shown_output(output),
                "is_error": is_error,
            },
        )


@dataclass(kw_only=True)
class ObservedToolset(WrapperToolset[RunDeps]):
    """Logs each call of the wrapped toolset's tools (wrap it before any name prefix). An
    output nested deeper than every JSON input may be (`kit.json_depth`) fails the call, as a
    failing tool does: the run's messages and events must stay writable and readable."""

    log: ToolCallLog
    server_label: str | None = None

    def _seen(self, name: str) -> str:
        """The tool's name as the model sees it."""
        return name if self.server_label is None else f"{self.server_label}_{name}"

    def _shown(self, name: str) -> str:
        return name if self.server_label is None else f"{self._seen(name)} (MCP)"

    async def call_tool(
        self,
        name: str,
        tool_args: JsonObject,
        ctx: RunContext[RunDeps],
        tool: ToolsetTool[RunDeps],
    ) -> Any:
        log = self.log
        call_id = ctx.tool_call_id or ""
        if self.server_label is None:  # built in: nothing leaves the process
            log.called(call_id, name, None, tool_args)
        else:
            await log.started(call_id, name, self.server_label, tool_args)
        try:
            output = await super().call_tool(name, tool_args, ctx, tool)
            if too_deep(output):  # pydantic writes no run's messages past 255 levels
                raise ToolFailure(f"{self._shown(name)} answered JSON that {TOO_DEEP}")
        except (ModelRetry, ToolFailure, ToolFailed) as exc:
            # ToolFailed: a built-in tool's refusal the model reads (`runtime.memory_tools`).
            log.returned(call_id, name, self.server_label, str(exc), is_error=True)
            if isinstance(exc, ToolFailure) and log.errors.goes_back(
                self.server_label, self._seen(name), str(exc)
            ):
                raise ToolFailed(str(exc)) from None
            raise
        log.returned(call_id, name, self.server_label, output, is_error=False)
        log.errors.succeeded(self._seen(name))
        return output


@dataclass
class RunToolset(CombinedToolset[RunDeps]):
    """Every tool of a run. Names are checked when an agent is written, but an MCP server's
    tools are only known now (labels `a_b` + tool `c` and `a` + `b_c` both make `a_b_c`).

    `structured`: the run has an output schema, so pydantic-ai adds its output tool, whose
    name no tool of the run may have (pydantic-ai would refuse the run with a `UserError`)."""

    structured: bool = False

    async def get_tools(self, ctx: RunContext[RunDeps]) -> dict[str, ToolsetTool[RunDeps]]:
        try:
            tools = await super().get_tools(ctx)
        except UserError as exc:
            match = _CONFLICT_NAME.search(str(exc))
            if match is None:
                raise
            raise ToolFailure(
                f"two tools of this run are called {match.group(1)!r}: change a server_label "
                "or leave one out with allowed_tools"
            ) from None
        if self.structured and OUTPUT_TOOL_NAME in tools:
            raise ToolFailure(
                f"a tool of this run is called {OUTPUT_TOOL_NAME!r}, a name reserved for the "
                "run's output (config.output_schema): rename the function, change the MCP "
                "server_label or leave the tool out with allowed_tools"
            )
        return tools
