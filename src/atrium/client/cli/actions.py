"""Answering a run that waits for its caller from the terminal (`atrium run`, `atrium runs act`).

Each pending call is shown with its arguments: an approval is a y/n question (a denial may give
a reason, which the model reads), a function call's output is typed or read from a file
(`@path`). Calls answered by options (`--approve`, `--deny`, `--output`, `--output-file`) are
not asked about, so a script can answer without a terminal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from atrium.client._sync import Client
from atrium.client.records import PendingToolCall, Run


class NoAnswer(Exception):
    """Standard input ended before every pending call was answered."""


@dataclass
class Preset:
    """Answers given on the command line, by call id."""

    approve: set[str] = field(default_factory=set)
    deny: set[str] = field(default_factory=set)
    outputs: dict[str, str] = field(default_factory=dict)
    reason: str | None = None

    @classmethod
    def of(
        cls,
        *,
        approve: list[str] | None,
        deny: list[str] | None,
        outputs: list[str] | None,
        output_files: list[str] | None,
        reason: str | None,
    ) -> Preset:
        given: dict[str, str] = {}
        for item in outputs or []:
            call_id, _, text = item.partition("=")
            given[call_id] = text
        for item in output_files or []:
            call_id, _, path = item.partition("=")
            given[call_id] = _read(path)
        return cls(set(approve or []), set(deny or []), given, reason)


def _read(path: str) -> str:
    try:
        return Path(path).expanduser().read_text()
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}") from None


def _shown(call: PendingToolCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    if call.kind == "approval" and call.server_label is not None:
        return f"{call.server_label}_{call.name} (MCP server {call.server_label}) {arguments}"
    return f"{call.name} {arguments}"


def _print_call(console: Console, call: PendingToolCall) -> None:
    console.print(f"  [bold]{escape(_shown(call))}[/]  [dim]{call.id}[/]")


def show_wait(run: Run, console: Console) -> None:
    """What a waiting run waits for, and the command that answers it (`atrium runs get`)."""
    action = run.required_action
    if action is None:
        return
    console.print(
        f"[bold yellow]It waits for you[/] [dim](until {action.expires_at:%Y-%m-%d %H:%M} UTC)[/]"
    )
    for call in action.tool_calls:
        console.print(f"  [dim]{call.kind}[/]", end="")
        _print_call(console, call)
    console.print(f"[dim]Answer it: atrium runs act {run.run_id}  (asks about each call)[/]")
    # The same without questions, for a script: an option per call.
    options = " ".join(
        f"--approve {call.id}" if call.kind == "approval" else f"--output {call.id}=TEXT"
        for call in action.tool_calls
    )
    approval = next((call for call in action.tool_calls if call.kind == "approval"), None)
    refuse = f"; refuse: --deny {approval.id} --reason TEXT" if approval else ""
    console.print(f"[dim]   at once: atrium runs act {run.run_id} {escape(options + refuse)}[/]")


def _ask(prompt: str, *, default: str | None = None) -> str:
    try:
        # On stderr, like the other notes: stdout carries the model's text.
        value: str = typer.prompt(prompt, default=default, show_default=False, err=True)
    except typer.Abort:  # end of input
        raise NoAnswer from None
    return value


def answer(client: Client, run: Run, console: Console, preset: Preset | None = None) -> Run:
    """Ask for (or take from `preset`) an answer to every pending call, then send them."""
    preset = preset or Preset()
    action = run.required_action
    assert action is not None
    outputs: dict[str, str] = {}
    approvals: dict[str, bool] = {}
    reasons: dict[str, str] = {}
    console.print(
        f"[bold yellow]{run.run_id} waits for you[/] "
        f"[dim](until {action.expires_at:%Y-%m-%d %H:%M} UTC)[/]"
    )
    for call in action.tool_calls:
        _print_call(console, call)
        if call.kind == "approval":
            if call.id in preset.approve or call.id in preset.deny:
                approved = call.id in preset.approve
                reason = preset.reason or ""
            else:
                approved = _ask("  Approve this call? [y/n]").strip().lower() in {"y", "yes"}
                reason = "" if approved else _ask("  Reason (optional)", default="")
            approvals[call.id] = approved
            if reason and not approved:
                reasons[call.id] = reason
        elif call.id in preset.outputs:
            outputs[call.id] = preset.outputs[call.id]
        else:
            typed = _ask("  Output (text, or @file to read it from a file)")
            outputs[call.id] = _read(typed[1:]) if typed.startswith("@") else typed
    return client.runs.submit_actions(
        run.run_id, tool_outputs=outputs, approvals=approvals, reasons=reasons
    )
