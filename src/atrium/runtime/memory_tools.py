"""An agent's memory tools (`config.memory`): `memory_search`, `memory_write`, `memory_delete`
on items, `block_append` and `block_replace` on blocks (docs/decisions/0059-memory-tools.md).

The tools reach the account's store through the worker's `MemoryStore`, which records each
write with the run and the call's wire id (the id `tool.called` shows). A namespace or a
block label outside `config.memory` is a failed call the model reads (`ToolFailed`: no retry
budget spent), not the end of the run. A write under `require_approval` raises
`ApprovalRequired` before it is a call (`MemoryApprovals`, outside `ObservedToolset`): the run
waits (`requires_action`), and only an approved call is executed when it resumes; a denied one
writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pydantic_ai import RunContext, Tool, ToolFailed
from pydantic_ai.exceptions import ApprovalRequired
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset, ToolsetTool, WrapperToolset

from atrium.agents.config import MemoryConfig
from atrium.agents.memory_config import WRITE_TOOLS, allows, needs_approval
from atrium.db.models import EventKind
from atrium.kit.json_object import JsonObject
from atrium.runtime.artifact_tools import RunDeps
from atrium.runtime.observed_calls import ObservedToolset, ToolCallLog, wire_call_id
from atrium.runtime.sink import EditedBlock, MemoryRefused, MemoryStore

MAX_SEARCH_LIMIT: Final = 20
# Searched without a namespace, or under one wider than a readable prefix, this many hits are
# read and those under `config.memory.read` kept (the store's own cap on a search).
_SCAN: Final = 100


def _shown(namespace: list[str]) -> str:
    return "/".join(namespace) or "(all)"


def _store(ctx: RunContext[RunDeps]) -> tuple[MemoryConfig, MemoryStore]:
    memory, store = ctx.deps.memory, ctx.deps.memory_store
    if memory is None or store is None:
        raise ToolFailed("memory is not available to this run")
    return memory, store


def _segments(namespace: object, name: str) -> list[str]:
    if not isinstance(namespace, list) or not all(isinstance(part, str) for part in namespace):
        raise ToolFailed(f'{name} must be a list of segments, e.g. ["users", "alice"]')
    return [str(part) for part in namespace]


def _writable(memory: MemoryConfig, namespace: list[str]) -> None:
    if not namespace or not allows(memory["write"], namespace):
        allowed = ", ".join(_shown(prefix) for prefix in memory["write"]) or "none"
        raise ToolFailed(
            f"namespace {_shown(namespace)!r} is outside what this agent may write "
            f"(config.memory.write: {allowed})"
        )


async def memory_search(
    ctx: RunContext[RunDeps],
    query: str,
    namespace: list[str] | None = None,
    limit: int = 5,
    by_meaning: bool = False,
) -> list[dict[str, Any]] | str:
    """Search long-term memory (kept across conversations) for items holding every word of
    the query, or with `by_meaning` the items nearest the query in meaning.

    Args:
        query: Words to find, e.g. `coffee alice`; by meaning, a question or phrase.
        namespace: Only under this namespace prefix, e.g. `["users", "alice"]`.
        limit: At most this many items (1-20).
        by_meaning: Nearest in meaning first, sharing no word needed (only where the server
            has an embeddings model).
    """
    memory, store = _store(ctx)
    readable = memory["read"]
    prefix = [] if namespace is None else _segments(namespace, "namespace")
    if not readable or (prefix and not allows(readable, prefix) and not _widens(readable, prefix)):
        allowed = ", ".join(_shown(prefix) for prefix in readable) or "none"
        raise ToolFailed(
            f"namespace {_shown(prefix)!r} is outside what this agent may read "
            f"(config.memory.read: {allowed})"
        )
    wanted = min(max(limit, 1), MAX_SEARCH_LIMIT)
    scoped = allows(readable, prefix)
    try:
        found = await store.search(
            query=query,
            prefix=prefix,
            limit=wanted if scoped else _SCAN,
            by_meaning=by_meaning,
        )
    except MemoryRefused as exc:
        raise ToolFailed(str(exc)) from None
    kept = [item for item in found if allows(readable, item.namespace)][:wanted]
    if not kept:
        return f"Nothing remembered matches {query!r}."
    return [
        {"namespace": item.namespace, "key": item.key, "value": item.value, "item_id": item.item_id}
        for item in kept
    ]


def _widens(readable: list[list[str]], prefix: list[str]) -> bool:
    """`prefix` is wider than a readable prefix (`users` over `users/alice`): searched, with
    only the readable items kept."""
    return any(allowed[: len(prefix)] == prefix for allowed in readable)


async def _write_begun(
    ctx: RunContext[RunDeps], namespace: list[str]
) -> tuple[MemoryStore, list[str], str]:
    """A write's or delete's start: the store, the namespace (one the agent may write), the
    call's wire id; the call's `tool.called` committed, and the run's lease checked, before the
    store changes."""
    memory, store = _store(ctx)
    segments = _segments(namespace, "namespace")
    _writable(memory, segments)
    call_id = wire_call_id(ctx.tool_call_id or "")
    await ctx.deps.sink.persist()
    return store, segments, call_id


async def memory_write(
    ctx: RunContext[RunDeps],
    namespace: list[str],
    key: str,
    value: Any,
    text: str | None = None,
    ttl_seconds: int | None = None,
) -> str:
    """Remember something across conversations: create or replace the item under
    (namespace, key).

    Args:
        namespace: Where it belongs, e.g. `["users", "alice"]`.
        key: Its name within the namespace, e.g. `coffee`.
        value: Any JSON value, e.g. `{"likes": "espresso"}`.
        text: What search should match; default: the strings inside value.
        ttl_seconds: Forget it this many seconds after the write; default: never.
    """
    store, segments, call_id = await _write_begun(ctx, namespace)
    try:
        item_id = await store.write(
            namespace=segments,
            key=key,
            value=value,
            text=text,
            ttl_seconds=ttl_seconds,
            tool_call_id=call_id,
        )
    except MemoryRefused as exc:
        raise ToolFailed(str(exc)) from None
    ctx.deps.sink.emit(
        EventKind.MEMORY_WRITTEN,
        {"item_id": item_id, "namespace": segments, "key": key, "tool_call_id": call_id},
    )
    return f"Remembered {key!r} under {_shown(segments)!r} (item {item_id})."


async def memory_delete(ctx: RunContext[RunDeps], namespace: list[str], key: str) -> str:
    """Forget the item under (namespace, key).

    Args:
        namespace: Its namespace, e.g. `["users", "alice"]`.
        key: Its key.
    """
    store, segments, call_id = await _write_begun(ctx, namespace)
    try:
        item_id = await store.delete(namespace=segments, key=key, tool_call_id=call_id)
    except MemoryRefused as exc:
        raise ToolFailed(str(exc)) from None
    if item_id is None:
        return f"Nothing was remembered as {key!r} under {_shown(segments)!r}."
    ctx.deps.sink.emit(
        EventKind.MEMORY_DELETED,
        {"item_id": item_id, "namespace": segments, "key": key, "tool_call_id": call_id},
    )
    return f"Forgot {key!r} under {_shown(segments)!r} (item {item_id})."


def _editable(memory: MemoryConfig, label: str) -> None:
    if label not in memory["blocks"]:
        allowed = ", ".join(memory["blocks"]) or "none"
        raise ToolFailed(
            f"block {label[:80]!r} is not one this agent may edit (config.memory.blocks: {allowed})"
        )


def _block_edited(ctx: RunContext[RunDeps], block: EditedBlock, call_id: str) -> str:
    ctx.deps.sink.emit(
        EventKind.MEMORY_WRITTEN,
        {
            "block_id": block.block_id,
            "label": block.label,
            "version": block.version,
            "tool_call_id": call_id,
        },
    )
    return (
        f"Block {block.label!r} is at version {block.version} "
        f"({block.chars} of {block.limit} characters)."
    )


async def block_append(ctx: RunContext[RunDeps], label: str, text: str) -> str:
    """Add text at the end of a memory block (a new line when the block has text already).

    Args:
        label: The block's label, e.g. `persona`.
        text: What to add.
    """
    memory, store = _store(ctx)
    _editable(memory, label)
    call_id = wire_call_id(ctx.tool_call_id or "")
    await ctx.deps.sink.persist()
    try:
        block = await store.append_block(label=label, text=text, tool_call_id=call_id)
    except MemoryRefused as exc:
        raise ToolFailed(str(exc)) from None
    return _block_edited(ctx, block, call_id)


async def block_replace(ctx: RunContext[RunDeps], label: str, old_text: str, new_text: str) -> str:
    """Replace text in a memory block: `old_text` must occur in it exactly once.

    Args:
        label: The block's label, e.g. `user`.
        old_text: The text to replace, exactly as the block holds it.
        new_text: What replaces it; empty removes it.
    """
    memory, store = _store(ctx)
    _editable(memory, label)
    call_id = wire_call_id(ctx.tool_call_id or "")
    await ctx.deps.sink.persist()
    try:
        block = await store.replace_block(
            label=label, old_text=old_text, new_text=new_text, tool_call_id=call_id
        )
    except MemoryRefused as exc:
        raise ToolFailed(str(exc)) from None
    return _block_edited(ctx, block, call_id)


_TOOLS: Final[dict[str, Tool[RunDeps]]] = {
    "memory_search": Tool(memory_search, takes_ctx=True),
    "memory_write": Tool(memory_write, takes_ctx=True),
    "memory_delete": Tool(memory_delete, takes_ctx=True),
    "block_append": Tool(block_append, takes_ctx=True),
    "block_replace": Tool(block_replace, takes_ctx=True),
}


def tool_names(memory: MemoryConfig) -> list[str]:
    """The memory tools the agent is given: search with readable namespaces, writes with
    writable ones, block edits with editable blocks."""
    names = ["memory_search"] if memory["read"] else []
    if memory["write"]:
        names += ["memory_write", "memory_delete"]
    if memory["blocks"]:
        names += ["block_append", "block_replace"]
    return names


def waits(memory: MemoryConfig) -> bool:
    """Whether a call of one of the agent's memory tools may wait for approval."""
    return any(name in WRITE_TOOLS and needs_approval(memory, name) for name in tool_names(memory))


def _within_write(memory: MemoryConfig, name: str, tool_args: JsonObject) -> bool:
    """Whether the call would write: one outside `config.memory` is refused by the tool at
    once, nobody is asked to approve it."""
    if name in ("block_append", "block_replace"):
        return tool_args.get("label") in memory["blocks"]
    namespace = tool_args.get("namespace")
    return isinstance(namespace, list) and bool(namespace) and allows(memory["write"], namespace)


@dataclass(kw_only=True)
class MemoryApprovals(WrapperToolset[RunDeps]):
    """Memory writes that wait for the caller's approval (`config.memory.require_approval`).
    Outside `ObservedToolset`: a call waiting for approval is not a call yet."""

    memory: MemoryConfig

    async def call_tool(
        self,
        name: str,
        tool_args: JsonObject,
        ctx: RunContext[RunDeps],
        tool: ToolsetTool[RunDeps],
    ) -> Any:
        if (
            not ctx.tool_call_approved
            and name in WRITE_TOOLS
            and needs_approval(self.memory, name)
            and _within_write(self.memory, name, tool_args)
        ):
            raise ApprovalRequired(metadata={"name": name})
        return await super().call_tool(name, tool_args, ctx, tool)


def memory_toolset(memory: MemoryConfig, log: ToolCallLog) -> AbstractToolset[RunDeps]:
    """The agent's memory tools, observed like every built-in tool, behind their approvals."""
    tools = FunctionToolset[RunDeps]([_TOOLS[name] for name in tool_names(memory)])
    return MemoryApprovals(wrapped=ObservedToolset(tools, log=log), memory=memory)
