"""How `atrium threads` prints threads for people: the threads table, one thread's details,
and a conversation as a transcript (who said what, tool calls and their results, summaries)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from atrium.client._table_fit import RecordTable
from atrium.client._view import status_text
from atrium.client.records import Thread, ThreadMessage

THREAD_STATUS_STYLE = {"idle": "green", "busy": "cyan", "requires_action": "bold yellow"}
# A tool's result or a call's arguments longer than this is cut in the transcript (a fetched
# page runs to many screens); the user's and the model's words are printed whole.
TOOL_SHOWN_CHARS = 600
_ROLE_STYLE = {
    "user": "bold cyan",
    "assistant": "bold green",
    "tool": "bold yellow",
    "summary": "bold magenta",
    "system": "bold",
}


def thread_status(status: str) -> Text:
    return Text(status, style=THREAD_STATUS_STYLE.get(status, ""))


def metadata_text(metadata: dict[str, Any]) -> str:
    return ", ".join(f"{key}={_plain(value)}" for key, value in metadata.items())


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _prompt_text(value: Any) -> str:
    """A prompt with input parts (files, images: docs/guide/files.md) is a list: a line each."""
    if isinstance(value, list):
        return "\n".join(_part(item) for item in value)
    return _plain(value)


def _part(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and isinstance(item.get("url"), str):
        return f"[image {item['url']}]"
    return json.dumps(item, ensure_ascii=False)


def threads_table(threads: Iterable[Thread]) -> Table:
    # Narrow, a thread is told apart by its metadata: its newest run's agent, status and id go
    # first (`threads get` shows them).
    table = RecordTable(box=box.SIMPLE_HEAD, optional=("agent", "run status", "last run"))
    table.add_column("thread", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("metadata", no_wrap=True, overflow="ellipsis", min_width=16, max_width=40)
    table.add_column("last run", no_wrap=True)
    table.add_column("run status", no_wrap=True)
    table.add_column("agent", no_wrap=True)
    table.add_column("created (UTC)", no_wrap=True)
    for thread in threads:
        last = thread.last_run
        table.add_row(
            thread.id,
            thread_status(thread.status),
            metadata_text(thread.metadata),
            last.id if last else "—",
            status_text(last.status) if last else "",
            last.agent_id if last else "",
            thread.created_at.strftime("%m-%d %H:%M:%S"),
        )
    return table


def thread_details(thread: Thread) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    table.add_row("thread", thread.id)
    table.add_row("status", thread_status(thread.status))
    table.add_row("created", thread.created_at.isoformat())
    table.add_row("metadata", metadata_text(thread.metadata) or "—")
    if thread.counts is not None:
        counts = thread.counts
        table.add_row("runs", str(counts.runs))
        table.add_row("messages", str(counts.messages))
    last = thread.last_run
    if last is not None:
        agent = (f"  agent {last.agent_id}", "dim")
        table.add_row("last run", Text.assemble(last.id, " ", status_text(last.status), agent))
    if thread.forked_from is not None:
        origin = thread.forked_from
        at = f" at {origin.run_id}" if origin.run_id else " (no run in its history)"
        table.add_row("forked from", f"{origin.thread_id}{at}")
    return table


def _cut(text: str, limit: int = TOOL_SHOWN_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters; --json shows all)"


def _call_text(name: str, arguments: Any) -> str:
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return f"{name}({_cut(shown)})"


def _heading(message: ThreadMessage) -> Text:
    role = message.role
    heading = Text(role, style=_ROLE_STYLE.get(role, "bold"))
    if role == "tool":
        outcome = " failed" if message.is_error else ""
        heading.append(f" {message.name or '?'}{outcome}", style="red" if message.is_error else "")
    elif role == "summary":
        heading.append(" of the conversation above: the model is given it in its place", "dim")
    if message.compacted:
        heading.append("  [compacted: the model no longer sees this]", style="dim italic")
    return heading


def _body(message: ThreadMessage) -> list[Text]:
    lines: list[Text] = []
    content = message.content
    if content is not None and content != "":
        text = _prompt_text(content) if message.role == "user" else _plain(content)
        if message.role == "tool":
            text = _cut(text)
        lines.append(Text(text))
    for call in message.tool_calls or []:
        lines.append(Text.assemble(("→ ", "yellow"), _call_text(call.name, call.arguments)))
    return lines


def transcript(messages: Iterable[ThreadMessage]) -> RenderableType:
    """The conversation, oldest first: a dim line where each run's items begin (the fork's
    copied history has none), then each item's role and its text, indented; a compacted item
    is dimmed and says so."""
    parts: list[RenderableType] = []
    source: object = object()  # no run seen yet
    for message in messages:
        if message.role != "summary" and message.run_id != source:
            source = message.run_id
            label = f"run {source}" if source else "copied from the thread this one was forked from"
            parts.append(Text(f"── {label}", style="dim"))
        parts.append(_heading(message))
        for line in _body(message):
            if message.compacted:
                line.stylize("dim")
            parts.append(_indented(line))
    return Group(*parts)


def _indented(text: Text) -> Text:
    # Each line of the text indented, none wrapped: the terminal wraps what is too long, and a
    # line of a tool's result stays one line for copy and paste.
    lines = text.split("\n", allow_blank=True)
    return Text("\n").join(Text("  ") + line for line in lines)
