"""Terminal rendering of the client commands: the live run view, tables, the usage chart."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from datetime import UTC, datetime

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from atrium.client._table_fit import RecordTable
from atrium.client.records import (
    Agent,
    Artifact,
    ArtifactCreated,
    MessageDelta,
    RequiredAction,
    Run,
    RunCancelled,
    RunCompleted,
    RunEvent,
    RunFailed,
    RunRequiresAction,
    RunRestarted,
    RunStarted,
    RunStep,
    ToolCalled,
    ToolReturned,
    UsageReport,
    Webhook,
    WebhookDelivery,
)

STATUS_STYLE = {
    "queued": "yellow",
    "running": "cyan",
    "requires_action": "bold yellow",
    "completed": "green",
    "failed": "red",
    "cancelled": "magenta",
}


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLE.get(status, ""))


def human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def credits_text(credits: float) -> str:
    return f"{credits:.6f}".rstrip("0").rstrip(".") if credits else "0"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def seconds_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


class RunView:
    """What `atrium run` shows while a run goes: model text as it arrives (complete lines are
    printed above the live area, the line being written stays in it) and a status line with a
    spinner, the status, elapsed time, the current step and any reconnects."""

    def __init__(self, console: Console, run: Run) -> None:
        self.console = console
        self.run_id = run.run_id
        self.model = run.model
        self.status: str = run.status
        age = (datetime.now(UTC) - run.created_at).total_seconds()
        # Elapsed time counts from the run's creation, so re-attaching shows the true age.
        self.origin = time.monotonic() - max(0.0, age)
        self.step = ""
        self.partial = ""
        self.wrote_text = False
        self.reconnects = 0
        self.note = ""
        self.spinner = Spinner("dots", style="cyan")
        self.artifacts: list[ArtifactCreated] = []
        self.finished_at: float | None = None
        self.tools = ToolLines()
        self.retries = Retries()

    # --- events -----------------------------------------------------------------------------------
    def apply(self, event: RunEvent) -> None:
        self.note = ""
        retried = self.retries.see(event)
        if retried is not None:
            # The text above was sent back: the retry's text starts on a line of its own.
            self.flush_text()
            self.console.print(Text(retry_note(retried), style="yellow"))
        if isinstance(event, MessageDelta):
            self._text(event.text)
        elif isinstance(event, RunRestarted):
            # The worker running it was lost: the run starts over and its text with it.
            self.flush_text()
            self.console.print(Text(restart_note(event.attempt), style="yellow"))
        elif isinstance(event, RunStarted):
            self.status = "running"
            self.step = ""
        elif isinstance(event, RunStep):
            self.status = "running"
            self.step = _step_text(event)
        elif isinstance(event, ToolCalled | ToolReturned):
            # A line each, above the live area; the text being written ends its line first,
            # or the tool line would be printed before it.
            self.flush_text()
            self.console.print(self.tools.line(event), soft_wrap=True, highlight=False)
            self.step = f"calling {self.tools.name(event)}" if isinstance(event, ToolCalled) else ""
        elif isinstance(event, ArtifactCreated):
            self.artifacts.append(event)
            self.step = f"wrote {event.name}"
        elif isinstance(event, RunRequiresAction):
            self.tools.expect(event.required_action)
            self.status = "requires_action"
            self.step = "waiting for you"
        elif isinstance(event, RunCompleted | RunFailed | RunCancelled):
            self.status = event.status
            self.finished_at = time.monotonic()
            self.step = ""

    def reconnecting(self, last_event_id: int, error: BaseException) -> None:
        self.reconnects += 1
        self.note = reconnect_note(last_event_id, error)

    def _text(self, text: str) -> None:
        self.wrote_text = True
        *complete, self.partial = (self.partial + text).split("\n")
        for line in complete:
            self.console.print(Text(line), soft_wrap=True, highlight=False)
        # A long paragraph is printed a terminal line at a time, so the live area stays small
        # (a live area taller than the terminal cannot be redrawn).
        width = max(self.console.width - 1, 20)
        while cell_len(self.partial) > width:
            cut = self.partial.rfind(" ", 0, width)
            cut = cut if cut > 0 else width
            self.console.print(Text(self.partial[:cut]), soft_wrap=True, highlight=False)
            self.partial = self.partial[cut + 1 if self.partial[cut : cut + 1] == " " else cut :]

    def flush_text(self) -> None:
        if self.partial:
            self.console.print(Text(self.partial), soft_wrap=True, highlight=False)
            self.partial = ""

    # --- rendering --------------------------------------------------------------------------------
    def elapsed(self) -> float:
        end = self.finished_at if self.finished_at is not None else time.monotonic()
        return end - self.origin

    def status_line(self) -> Text:
        line = Text.assemble(
            (self.run_id, "bold"),
            "  ",
            status_text(self.status),
            "  ",
            (seconds_text(self.elapsed()), "dim"),
        )
        # What changes comes first, the model last: a narrow terminal crops the line's end.
        if self.step:
            line.append(f"  {self.step}", style="dim")
        if self.note:
            line.append(f"  ⚠ {self.note}", style="yellow")
        elif self.reconnects:
            line.append(f"  ↻ resumed ×{self.reconnects}", style="dim")
        if self.model:
            line.append(f"  {self.model}", style="dim")
        return line

    def __rich__(self) -> RenderableType:
        self.spinner.update(text=self.status_line())
        if self.partial:
            return Group(Text(self.partial), self.spinner)
        return self.spinner


TOOL_SHOWN_CHARS = 200


def _abbreviated(text: str, width: int = TOOL_SHOWN_CHARS) -> str:
    line = " ".join(text.split())  # one line: a tool's output may hold many
    return line if len(line) <= width else line[: width - 1] + "…"


class ToolLines:
    """One line per tool event, as the model sees the tool (`docs_search`):
    `→ docs_search {"q": "leases"}` when called, `← docs_search: …` when it returned, `✗ …`
    when it failed. Both events carry the server label; events stored by an older server have
    none on `tool.returned`, and then its call's (same id) gives it, or the pending call of the
    wait it answered (a denied approval is never called)."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}

    def expect(self, action: RequiredAction) -> None:
        """Calls a run waits for: a denied approval is answered (`tool.returned`) without ever
        being called, so its pending call gives its server label."""
        for call in action.tool_calls:
            if call.server_label:
                self._labels[call.id] = call.server_label

    def name(self, event: ToolCalled | ToolReturned) -> str:
        if event.server_label:
            self._labels[event.tool_call_id] = event.server_label
        label = self._labels.get(event.tool_call_id)
        return f"{label}_{event.name}" if label else event.name

    def line(self, event: ToolCalled | ToolReturned) -> Text:
        name = self.name(event)
        if isinstance(event, ToolCalled):
            arguments = json.dumps(event.arguments, ensure_ascii=False, separators=(", ", ": "))
            return Text.assemble(("→ ", "cyan"), (name, "bold"), " ", _abbreviated(arguments))
        if event.is_error:
            return Text.assemble(
                ("✗ ", "red"), (name, "bold"), " failed: ", _abbreviated(event.output)
            )
        return Text.assemble(("← ", "green"), (name, "bold"), ": ", _abbreviated(event.output))


class Retries:
    """Which model requests ask again for an answer the model already gave.

    pydantic-ai makes another model request after a response without tool calls only to send
    that response back (text where an output schema wants JSON, an answer that failed its
    checks), so model text followed by a model request, with no tool call between them, is an
    answer that was not accepted: the next request's text replaces it."""

    def __init__(self) -> None:
        self._answered = False  # model text since the last model request or tool call

    def see(self, event: RunEvent) -> int | None:
        """The index of the model request `event` starts when it retries, else None."""
        if isinstance(event, MessageDelta):
            self._answered = self._answered or bool(event.text)
        elif isinstance(event, RunStep) and event.step == "model_request":
            retried, self._answered = self._answered, False
            if retried:
                return event.index or 0
        elif isinstance(event, RunStep | ToolCalled | ToolReturned | RunStarted) or (
            event.event == "run.requires_action"
        ):
            self._answered = False
        return None


def retry_note(index: int) -> str:
    request = f" (model request {index})" if index else ""
    return f"↻ retrying{request}: the model's answer above was not accepted"


def reconnect_note(last_event_id: int, error: BaseException) -> str:
    return (
        f"connection dropped ({type(error).__name__}); reconnecting, "
        f"resuming after event {last_event_id}"
    )


def restart_note(attempt: int) -> str:
    return f"↻ the run restarted (attempt {attempt}); the text above is superseded"


def _step_text(event: RunStep) -> str:
    if event.step == "model_request":
        return f"model request {event.index}" if event.index else "model request"
    if event.step == "tool_call":
        return f"calling {event.tool}"
    if event.step == "tool_result":
        return f"{event.tool} done"
    return event.step


# Who cancelled a run, by its `cancel_reason`.
_CANCELLED_BY = {
    "client": "a cancel request",
    "interrupt": "a later prompt of its thread (interrupt: what it produced stays)",
    "rollback": "a later prompt of its thread (rollback: dropped from the thread)",
    "thread_deleted": "its thread's deletion",
    "superseded": "its schedule's next firing",
}


def summary(console: Console, run: Run, view_elapsed: float | None = None) -> None:
    """The end of a run: outcome, artifacts, credits."""
    elapsed = view_elapsed
    if run.finished_at is not None:
        elapsed = (run.finished_at - run.created_at).total_seconds()
    outcome = Text.assemble(status_text(run.status), " ", (run.run_id, "bold"))
    if elapsed is not None:
        outcome.append(f" in {seconds_text(elapsed)}", style="dim")
    if run.error is not None:
        outcome.append(f"\n{run.error.code}: {run.error.message}", style="red")
    if run.status == "cancelled" and run.cancel_reason is not None:
        outcome.append(f"\nCancelled by {_CANCELLED_BY[run.cancel_reason]}", style="dim")
    console.print(outcome)
    if run.artifacts:
        console.print(artifacts_table(run.artifacts))
        console.print(Text(f"Download: atrium artifacts download {run.run_id} -o DIR", style="dim"))
    if run.billing is not None:
        b = run.billing
        console.print(
            Text.assemble(
                ("Credits: ", "bold"),
                credits_text(b.credits),
                (
                    f"  ({b.input_tokens} input + {b.output_tokens} output tokens, "
                    f"{_count(b.requests, 'model request')}, {_count(b.tool_calls, 'tool call')})",
                    "dim",
                ),
            )
        )


PROMPT_SHOWN_CHARS = 2_000


def run_header(run: Run) -> Text:
    """What a run was asked and of which model: `Prompt:` (a long one cut, saying how much
    more there is) and `Model:`, with the agent and the thread."""
    prompt = run.prompt
    if len(prompt) > PROMPT_SHOWN_CHARS:
        rest = len(prompt) - PROMPT_SHOWN_CHARS
        prompt = f"{prompt[:PROMPT_SHOWN_CHARS]}… ({rest} more characters; --json shows all)"
    return Text.assemble(
        ("Prompt: ", "bold"),
        prompt,
        "\n",
        ("Model: ", "bold"),
        run.model or "?",
        ("  agent ", "dim"),
        run.agent_id,
        ("  thread ", "dim"),
        run.thread_id,
    )


def first_line(text: str, width: int = 48) -> str:
    """The start of `text` on one line: its first line, cut to `width` with an ellipsis."""
    line = text.strip().split("\n", 1)[0]
    cut = len(line) > width or "\n" in text.strip()
    return (line[: width - 1] + "…") if len(line) > width else line + ("…" if cut else "")


def artifacts_table(artifacts: Iterable[Artifact]) -> Table:
    table = Table(title="Artifacts", title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("artifact", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("type")
    table.add_column("size", justify="right", no_wrap=True)
    for artifact in artifacts:
        table.add_row(
            artifact.artifact_id,
            artifact.name,
            artifact.mime_type,
            human_bytes(artifact.size_bytes),
        )
    return table


def runs_table(runs: Iterable[Run]) -> Table:
    # Narrow, a run is told apart by its prompt: the agent (`runs get` shows it), the time it
    # took and its credits go before the prompt is cut below 32 characters.
    table = RecordTable(box=box.SIMPLE_HEAD, optional=("agent", "took", "credits"))
    table.add_column("run", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("agent", no_wrap=True)
    table.add_column("prompt", no_wrap=True, overflow="ellipsis", min_width=32, max_width=48)
    table.add_column("created (UTC)", no_wrap=True)
    table.add_column("took", justify="right", no_wrap=True)
    table.add_column("credits", justify="right", no_wrap=True)
    for run in runs:
        duration = ""
        if run.finished_at is not None:
            duration = seconds_text((run.finished_at - run.created_at).total_seconds())
        table.add_row(
            run.run_id,
            status_text(run.status),
            run.agent_id,
            first_line(run.prompt),
            run.created_at.strftime("%m-%d %H:%M:%S"),
            duration,
            credits_text(run.billing.credits) if run.billing else "",
        )
    return table


def agents_table(agents: Iterable[Agent]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("agent", no_wrap=True)
    table.add_column("name")
    table.add_column("model", no_wrap=True)
    table.add_column("temp.", justify="right")
    table.add_column("description")
    for agent in agents:
        table.add_row(
            agent.agent_id,
            agent.name,
            agent.config.model,
            f"{agent.config.temperature:g}",
            agent.description,
        )
    return table


def agent_details(agent: Agent) -> Table:
    """One agent, every field and config key (MCP header values come masked as `***`)."""
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("agent", agent.agent_id)
    table.add_row("name", agent.name)
    table.add_row("description", agent.description)
    if agent.version is not None:
        table.add_row("version", str(agent.version))
    config = agent.config.model_dump(mode="json")
    for key, value in config.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        table.add_row(key, Text(shown))
    table.add_row("created", agent.created_at.isoformat(timespec="seconds"))
    table.add_row("updated", agent.updated_at.isoformat(timespec="seconds"))
    return table


def webhooks_table(webhooks: Iterable[Webhook]) -> Table:
    table = RecordTable(box=box.SIMPLE_HEAD, optional=("created (UTC)",))
    table.add_column("webhook", no_wrap=True)
    # Narrower than 40, the URL folds over lines: every character of it stays (`webhooks get`
    # shows it in this table too).
    table.add_column("url", overflow="fold", min_width=40)
    table.add_column("events")
    table.add_column("created (UTC)", no_wrap=True)
    for webhook in webhooks:
        table.add_row(
            webhook.webhook_id,
            webhook.url,
            ", ".join(webhook.events),
            webhook.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


DELIVERY_STYLE = {"pending": "yellow", "delivered": "green", "failed": "red"}


def deliveries_table(deliveries: Iterable[WebhookDelivery]) -> Table:
    # Narrow, the run and the event go first: a failing endpoint is read from the status, the
    # tries, the error and the next try.
    table = RecordTable(box=box.SIMPLE_HEAD, optional=("run", "event", "next try (UTC)"))
    table.add_column("delivery", no_wrap=True)
    table.add_column("run", no_wrap=True)
    table.add_column("event", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("tries", justify="right")
    # An error wraps between words; a word too long for the cell (a URL) ends in "…" rather
    # than running on over lines of a few characters each.
    table.add_column("response", overflow="ellipsis", min_width=20)
    table.add_column("next try (UTC)", no_wrap=True)
    for delivery in deliveries:
        response = str(delivery.response_status) if delivery.response_status else ""
        if delivery.error:
            response = f"{response} {delivery.error}".strip()
        table.add_row(
            delivery.delivery_id,
            delivery.run_id,
            delivery.event,
            Text(delivery.status, style=DELIVERY_STYLE.get(delivery.status, "")),
            str(delivery.attempts),
            response,
            delivery.next_attempt_at.strftime("%m-%d %H:%M:%S") if delivery.next_attempt_at else "",
        )
    return table


USAGE_METRICS = ("credits", "runs", "tokens", "requests")


def _metric(day: object, metric: str) -> float:
    if metric == "tokens":
        return float(getattr(day, "input_tokens", 0) + getattr(day, "output_tokens", 0))
    return float(getattr(day, metric))


def usage_table(report: UsageReport) -> Table:
    title = f"Usage {report.start_date} → {report.end_date}"
    if report.agent_id:
        title += f" (agent {report.agent_id})"
    table = Table(title=title, title_justify="left", show_footer=True, box=box.SIMPLE_HEAD)
    table.add_column("day (UTC)", no_wrap=True)
    for header in ("runs", "done", "failed", "cancel", "tokens", "requests", "credits"):
        table.add_column(header, justify="right", no_wrap=True)
    totals = report.totals
    footer = [
        "total",
        str(totals.runs),
        str(totals.completed),
        str(totals.failed),
        str(totals.cancelled),
        str(totals.input_tokens + totals.output_tokens),
        str(totals.requests),
        credits_text(totals.credits),
    ]
    for column, text in zip(table.columns, footer, strict=True):
        column.footer = text
    for day in report.daily:
        table.add_row(
            day.date.isoformat(),
            str(day.runs),
            str(day.completed),
            str(day.failed),
            str(day.cancelled),
            str(day.input_tokens + day.output_tokens),
            str(day.requests),
            credits_text(day.credits),
            style="dim" if day.runs == 0 and day.requests == 0 else None,
        )
    return table


def usage_versions_table(report: UsageReport) -> Table | None:
    """The agent's finished runs per version they executed, newest version first; None for a
    report of every agent (it has no `versions`)."""
    if not report.versions:
        return None
    table = Table(
        title=f"By version (agent {report.agent_id})", title_justify="left", box=box.SIMPLE_HEAD
    )
    table.add_column("version", justify="right", no_wrap=True)
    for header in ("runs", "done", "failed", "cancel", "tokens", "requests", "credits"):
        table.add_column(header, justify="right", no_wrap=True)
    for row in report.versions:
        table.add_row(
            # Runs created before agents had versions recorded none.
            "none" if row.version is None else str(row.version),
            str(row.runs),
            str(row.completed),
            str(row.failed),
            str(row.cancelled),
            str(row.input_tokens + row.output_tokens),
            str(row.requests),
            credits_text(row.credits),
        )
    return table


def usage_chart(report: UsageReport, *, metric: str = "credits", width: int = 50) -> Text:
    """One bar per day, scaled to the busiest day (eighth-block resolution)."""
    values = [(day.date.isoformat(), _metric(day, metric)) for day in report.daily]
    peak = max((value for _, value in values), default=0.0)
    chart = Text(f"{metric} per day\n", style="bold")
    blocks = " ▏▎▍▌▋▊▉"
    for label, value in values:
        eighths = round(value / peak * width * 8) if peak > 0 else 0
        if value > 0:
            eighths = max(eighths, 1)
        full, rest = divmod(eighths, 8)
        bar = "█" * full + (blocks[rest] if rest else "")
        shown = credits_text(value) if metric == "credits" else f"{value:.0f}"
        chart.append(f"{label} ")
        chart.append(bar.ljust(width), style="cyan")
        chart.append(f" {shown}\n")
    return chart
