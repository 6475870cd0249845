"""What one MCP server may send a run (docs/guide/tools.md#limits): a tool result of at most
`run_max_prompt_chars` characters of JSON, the bound of a function tool's output; a tool list
of at most `mcp_max_tools` tools and `mcp_max_tool_list_bytes`. Over any, the run ends with
TOOL_ERROR naming the tool or the server, as a failing tool ends it.

Each is checked on what the MCP client parsed; before that, no response body is read past the
largest of them (`ResponseLimit`), so an 8 MB answer is never held whole
(docs/decisions/0041-mcp-output-and-tool-list-bounds.md). A response the MCP SDK fails to read
never reaches the request that waits for it (the SDK logs it), so the limit cancels the waiting
call itself rather than leave it to the call timeout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx
import pydantic_core
from pydantic_ai import RunContext
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from atrium.kit.json_object import JsonObject
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.observed_calls import ToolFailure
from atrium.settings import Settings

if TYPE_CHECKING:
    from fastmcp import Client
    from mcp import types as mcp_types

# A result within the output limit may take up to this many bytes a character on the wire: 12
# for a character escaped as a surrogate pair (`\ud83d\ude00`), twice (as `content` text and
# as `structuredContent`).
_WIRE_BYTES_PER_CHAR: Final = 24
_ENVELOPE_BYTES: Final = 64 * 1024  # JSON-RPC around a tool list, SSE framing


def response_bytes(settings: Settings) -> int:
    """The most bytes of one response read from an MCP server: room for the largest result
    and the largest tool list page that the limits let through."""
    return (
        max(settings.mcp_max_tool_list_bytes, _WIRE_BYTES_PER_CHAR * settings.run_max_prompt_chars)
        + _ENVELOPE_BYTES
    )


class _ResponseRefused(Exception):
    def __init__(self, *, compressed: bool) -> None:
        super().__init__()
        self.compressed = compressed


@dataclass(eq=False)
class ResponseLimit:
    """Stops reading any response of one MCP server's HTTP client past `max_bytes` (or sent
    compressed: its size unpacked is known only once unpacked), and cancels the calls watching."""

    max_bytes: int
    tripped: bool = False
    compressed: bool = False
    _watching: set[anyio.CancelScope] = field(default_factory=set)

    def install(self, http: httpx.AsyncClient) -> None:
        http.headers["Accept-Encoding"] = "identity"
        http.event_hooks["response"] = [*http.event_hooks["response"], self._on_response]

    async def _on_response(self, response: httpx.Response) -> None:
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        declared = response.headers.get("Content-Length", "")
        if encoding != "identity":
            self.compressed = True
            self._trip()
        elif declared.isdigit() and int(declared) > self.max_bytes:
            self._trip()
        if self.tripped:
            raise _ResponseRefused(compressed=self.compressed)
        if isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _LimitedStream(response.stream, self)

    def _trip(self) -> None:
        self.tripped = True
        for scope in self._watching:
            scope.cancel()

    @contextmanager
    def watching(self) -> Iterator[None]:
        """The block is cancelled if a response is refused; `_ResponseRefused` then."""
        with anyio.CancelScope() as scope:
            self._watching.add(scope)
            try:
                yield
            finally:
                self._watching.discard(scope)
        if self.tripped:
            raise _ResponseRefused(compressed=self.compressed)


class _LimitedStream(httpx.AsyncByteStream):
    def __init__(self, stream: httpx.AsyncByteStream, limit: ResponseLimit) -> None:
        self._stream = stream
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self._stream:
            read += len(chunk)
            if read > self._limit.max_bytes:
                self._limit._trip()
                raise _ResponseRefused(compressed=False)
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def output_problem(output: object, settings: Settings) -> str | None:
    """Why a tool's result may not reach the model, or None: measured as a function tool's
    output is (`runs/api/actions.py`), in characters of JSON."""
    text = pydantic_core.to_json(output, bytes_mode="base64", fallback=str).decode()
    return _too_long(len(text), settings) if len(text) > settings.run_max_prompt_chars else None


def _too_long(size: int | None, settings: Settings) -> str:
    of = "" if size is None else f" ({size} characters of JSON)"
    return (
        f"answered more than the {settings.run_max_prompt_chars} characters a tool output may "
        f"have{of} (ATRIUM_RUN_MAX_PROMPT_CHARS)"
    )


async def tools_within_limits(
    client: Client[Any], *, server_label: str, settings: Settings
) -> tuple[list[mcp_types.Tool], int]:
    """The server's tools, page by page, and their size as JSON; `ToolFailure` as soon as they
    pass `mcp_max_tools` or `mcp_max_tool_list_bytes`, so no more pages are held than fit.
    Pages without end are ended by the listing timeout."""
    tools: list[mcp_types.Tool] = []
    size = 0
    cursor: str | None = None
    while True:
        page = await client.list_tools_mcp(cursor=cursor)
        tools.extend(page.tools)
        size += sum(
            len(tool.model_dump_json(by_alias=True, exclude_none=True)) for tool in page.tools
        )
        if len(tools) > settings.mcp_max_tools:
            raise ToolFailure(
                f"MCP server {server_label} lists more than {settings.mcp_max_tools} tools "
                "(ATRIUM_MCP_MAX_TOOLS)"
            )
        if size > settings.mcp_max_tool_list_bytes:
            raise ToolFailure(_list_too_large(server_label, settings))
        if not page.nextCursor:
            return tools, size
        cursor = page.nextCursor


def _compressed(server_label: str) -> str:
    return f"MCP server {server_label} answered compressed, although asked not to"


def _list_too_large(server_label: str, settings: Settings) -> str:
    return (
        f"MCP server {server_label} lists more than {settings.mcp_max_tool_list_bytes} bytes of "
        "tools (ATRIUM_MCP_MAX_TOOL_LIST_BYTES)"
    )


@dataclass(kw_only=True)
class LimitedToolset(WrapperToolset[RunDeps]):
    """One MCP server's toolset within one run, its tool list and results within the limits."""

    server_label: str
    limit: ResponseLimit
    settings: Settings

    async def get_tools(self, ctx: RunContext[RunDeps]) -> dict[str, ToolsetTool[RunDeps]]:
        try:
            with self.limit.watching():
                return await super().get_tools(ctx)
        except _ResponseRefused as exc:
            raise ToolFailure(
                _compressed(self.server_label)
                if exc.compressed
                else _list_too_large(self.server_label, self.settings)
            ) from None

    async def call_tool(
        self,
        name: str,
        tool_args: JsonObject,
        ctx: RunContext[RunDeps],
        tool: ToolsetTool[RunDeps],
    ) -> Any:
        shown = f"{self.server_label}_{name} (MCP)"
        try:
            with self.limit.watching():
                output = await super().call_tool(name, tool_args, ctx, tool)
        except _ResponseRefused as exc:
            raise ToolFailure(
                _compressed(self.server_label)
                if exc.compressed
                else f"{shown} {_too_long(None, self.settings)}"
            ) from None
        problem = output_problem(output, self.settings)
        if problem is not None:
            raise ToolFailure(f"{shown} {problem}")
        return output
