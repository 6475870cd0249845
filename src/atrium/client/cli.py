"""Client commands of `atrium`: run a prompt and follow it live, list runs, download artifacts,
manage agents, show usage. They talk HTTP to a server: `--url`/`ATRIUM_URL` (default
`http://127.0.0.1:8000`) and `--api-key`/`ATRIUM_API_KEY`."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from atrium.client import _view as view
from atrium.client._sync import Client
from atrium.client.errors import (
    APIConnectionError,
    APIError,
    AtriumError,
    ConfigurationError,
    InvalidParameterError,
    StreamError,
)
from atrium.client.models import MessageDelta, Run, RunEvent, RunStarted

T = TypeVar("T")

# Piped output is not cut to 80 columns: ids in tables stay whole. Lines of text are never
# wrapped (soft wrap): a path or an id split over two lines breaks scripts and copy-paste, and
# a terminal wraps long lines by itself.
_PIPED_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160
console = Console(highlight=False, width=_PIPED_WIDTH, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)

UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="ATRIUM_URL",
        help="Server address (default http://127.0.0.1:8000).",
        show_default=False,
    ),
]
KeyOption = Annotated[
    str | None,
    typer.Option("--api-key", envvar="ATRIUM_API_KEY", help="API key (atr_…).", show_default=False),
]

runs_app = typer.Typer(help="Agent runs: list, show, follow, cancel.", no_args_is_help=True)
artifacts_app = typer.Typer(help="Files written by runs.", no_args_is_help=True)
agents_app = typer.Typer(help="Agents: list and create.", no_args_is_help=True)

CLI_STREAM_RECONNECTS = 70

# Server parameter names → the option a user typed.
_OPTION_OF = {"start_date": "--from", "end_date": "--to", "agent_id": "--agent"}


def register(app: typer.Typer) -> None:
    """Add the client commands to the `atrium` command."""
    app.command("run")(run)
    app.add_typer(runs_app, name="runs")
    app.add_typer(artifacts_app, name="artifacts")
    app.add_typer(agents_app, name="agents")
    app.command("usage")(usage)


@contextmanager
def _client(url: str | None, api_key: str | None) -> Iterator[Client]:
    """A client for one command; API errors become a message and exit status 1."""
    try:
        # A person following a run would rather wait out a server restart than be dropped:
        # about five minutes of reconnects (Ctrl-C detaches at any time).
        with Client(url, api_key, stream_reconnects=CLI_STREAM_RECONNECTS) as client:
            yield client
    except ConfigurationError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    except APIError as exc:
        message = f"[red]error:[/] {exc.status_code} {exc.code}: {escape(exc.message)}"
        if isinstance(exc, InvalidParameterError) and exc.parameter:
            parameter = _OPTION_OF.get(exc.parameter, exc.parameter)
            message += f" [dim](parameter: {escape(parameter)})[/]"
        if exc.status_code == 401:
            message += "\n[dim]Check ATRIUM_API_KEY (or --api-key).[/]"
        errors.print(message)
        raise typer.Exit(1) from exc
    except APIConnectionError as exc:
        errors.print(
            f"[red]error:[/] cannot reach the server: {escape(str(exc))}\n"
            "[dim]Is `atrium serve` running? Set ATRIUM_URL (or --url) to its address.[/]"
        )
        raise typer.Exit(1) from exc
    except AtriumError as exc:
        errors.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from exc


# --- atrium run -----------------------------------------------------------------------------------
def run(
    prompt: Annotated[str, typer.Argument(help="The task for the agent.")],
    agent: Annotated[
        str | None, typer.Option("--agent", help="Agent id (default: the account's default).")
    ] = None,
    thread: Annotated[
        str | None, typer.Option("--thread", help="Continue this thread (thr_…).")
    ] = None,
    follow: Annotated[
        bool,
        typer.Option(
            "--follow/--no-follow",
            help="Stream the run live until it finishes (default), or print its id and exit.",
        ),
    ] = True,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Start an agent run and follow it live: status, model text, artifacts, credits."""
    with _client(url, api_key) as client:
        created = client.runs.create(prompt, agent_id=agent, thread_id=thread)
        if not follow:
            console.print(
                Text.assemble((created.run_id, "bold"), "  ", view.status_text(created.status))
            )
            console.print(f"[dim]Follow it: atrium runs follow {created.run_id}[/]")
            return
        _follow(client, created)


@runs_app.command("follow")
def runs_follow(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Attach to a run: replay its events so far, then follow it live until it finishes."""
    with _client(url, api_key) as client:
        _follow(client, client.runs.get(run_id))


def _follow(client: Client, run: Run) -> None:
    live_view = view.RunView(console, run)
    plain = _PlainView()
    try:
        if console.is_terminal:
            with Live(live_view, console=console, refresh_per_second=12, transient=True):
                for event in client.runs.stream(run.run_id, on_reconnect=live_view.reconnecting):
                    live_view.apply(event)
            live_view.flush_text()
        else:
            errors.print(f"{run.run_id} {run.status}")
            for event in client.runs.stream(run.run_id, on_reconnect=plain.reconnecting):
                plain.apply(event)
    except KeyboardInterrupt:
        live_view.flush_text()
        errors.print(
            f"\nDetached; {run.run_id} keeps running.\n"
            f"Follow again: atrium runs follow {run.run_id}   "
            f"Cancel: atrium runs cancel {run.run_id}"
        )
        raise typer.Exit(130) from None
    except StreamError as exc:
        live_view.flush_text()
        errors.print(
            f"[red]error:[/] lost the event stream of {run.run_id}: {escape(str(exc))}\n"
            f"[dim]The run goes on; follow it again: atrium runs follow {run.run_id}[/]"
        )
        raise typer.Exit(1) from exc
    finished = client.runs.get(run.run_id)
    if live_view.wrote_text or plain.wrote_text:
        console.print()
    view.summary(console, finished, live_view.elapsed())
    if finished.status != "completed":
        raise typer.Exit(1)


class _PlainView:
    """Without a terminal: model text to stdout as it arrives, progress notes to stderr."""

    def __init__(self) -> None:
        self.wrote_text = False
        self._open_line = False  # model text written that did not end its line

    def apply(self, event: RunEvent) -> None:
        if isinstance(event, MessageDelta):
            self.wrote_text = True
            console.file.write(event.text)
            console.file.flush()
            self._open_line = bool(event.text) and not event.text.endswith("\n")
        elif isinstance(event, RunStarted) and event.attempt and event.attempt > 1:
            self._end_line()
            errors.print(f"[yellow]{view.restart_note(event.attempt)}[/]")
        elif event.event in ("run.started", "artifact.created") or event.terminal:
            # Notes go to stderr; end the text's line first, or a terminal showing both
            # streams glues the note to the text.
            self._end_line()
            name = getattr(event, "name", "")
            errors.print(f"[dim]{event.event}{' ' + name if name else ''}[/]")

    def _end_line(self) -> None:
        if self._open_line:
            console.file.write("\n")
            console.file.flush()
            self._open_line = False

    def reconnecting(self, last_event_id: int, error: BaseException) -> None:
        errors.print(f"[yellow]{view.reconnect_note(last_event_id, error)}[/]")


# --- atrium runs ----------------------------------------------------------------------------------
@runs_app.command("list")
def runs_list(
    status: Annotated[
        str | None, typer.Option(help="queued, running, completed, failed or cancelled.")
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's runs.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Only this thread.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="How many runs.")] = 20,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The latest runs, newest first."""
    with _client(url, api_key) as client:
        page = client.runs.list(status=status, agent_id=agent, thread_id=thread, limit=limit)
    if not page.data:
        console.print('No runs yet. Start one: atrium run "your prompt"')
        return
    console.print(view.runs_table(page.data))
    if page.has_more:
        console.print("[dim]More runs exist; raise --limit (at most 100) to see more.[/]")


@runs_app.command("get")
def runs_get(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One run: status, result, artifacts, credits."""
    with _client(url, api_key) as client:
        found = client.runs.get(run_id)
    if found.result:
        console.print(Text(found.result))
    view.summary(console, found)


@runs_app.command("cancel")
def runs_cancel(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Cancel a queued or running run."""
    with _client(url, api_key) as client:
        cancelled = client.runs.cancel(run_id)
    console.print(
        Text.assemble((cancelled.run_id, "bold"), "  ", view.status_text(cancelled.status))
    )


# --- atrium artifacts -----------------------------------------------------------------------------
@artifacts_app.command("list")
def artifacts_list(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The files a run wrote."""
    with _client(url, api_key) as client:
        found = client.runs.artifacts(run_id)
    if not found:
        console.print(f"{run_id} has no artifacts.")
        return
    console.print(view.artifacts_table(found))


@artifacts_app.command("download")
def artifacts_download(
    run_id: Annotated[str, typer.Argument(help="Run id (run_…).")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Directory to save into (created if needed).")
    ] = Path("."),
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Download every artifact of a run into a directory (SHA-256 checked)."""
    with _client(url, api_key) as client:
        found = client.runs.artifacts(run_id)
        if not found:
            console.print(f"{run_id} has no artifacts.")
            return
        for artifact in found:
            path = client.runs.download_artifact(run_id, artifact.artifact_id, to=output)
            console.print(f"{path}  [dim]{view.human_bytes(artifact.size_bytes)}[/]")


# --- atrium agents --------------------------------------------------------------------------------
@agents_app.command("list")
def agents_list(url: UrlOption = None, api_key: KeyOption = None) -> None:
    """The account's agents."""
    with _client(url, api_key) as client:
        found = client.agents.list()
    console.print(view.agents_table(found))


@agents_app.command("create")
def agents_create(
    name: Annotated[str, typer.Argument(help="Agent name.")],
    description: Annotated[str | None, typer.Option(help="What the agent is for.")] = None,
    model: Annotated[
        str | None,
        typer.Option(help="provider:name, e.g. atrium:offline or openai:gpt-4o-mini."),
    ] = None,
    temperature: Annotated[float | None, typer.Option(help="0 to 2.")] = None,
    instructions: Annotated[str | None, typer.Option(help="System instructions.")] = None,
    tool: Annotated[
        list[str] | None, typer.Option("--tool", help="A tool to allow (repeat); default: all.")
    ] = None,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Create an agent; use its id with `atrium run --agent`."""
    config: dict[str, Any] = {}
    for key, value in (
        ("model", model),
        ("temperature", temperature),
        ("instructions", instructions),
        ("tools", tool),
    ):
        if value is not None:
            config[key] = value
    with _client(url, api_key) as client:
        agent = client.agents.create(name, description=description, config=config or None)
    console.print(view.agents_table([agent]))
    console.print(f'[dim]Run it: atrium run --agent {agent.agent_id} "your prompt"[/]')


# --- atrium usage ---------------------------------------------------------------------------------
def usage(
    start: Annotated[
        datetime | None,
        typer.Option("--from", formats=["%Y-%m-%d"], help="First day (default: 29 days ago)."),
    ] = None,
    end: Annotated[
        datetime | None,
        typer.Option("--to", formats=["%Y-%m-%d"], help="Last day (default: today)."),
    ] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent.")] = None,
    metric: Annotated[
        str, typer.Option(help=f"What the chart shows: {', '.join(view.USAGE_METRICS)}.")
    ] = "credits",
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Usage per day (UTC): a table and a bar chart."""
    if metric not in view.USAGE_METRICS:
        raise typer.BadParameter(f"one of {', '.join(view.USAGE_METRICS)}", param_hint="--metric")
    with _client(url, api_key) as client:
        report = client.analytics.usage(
            start_date=start.date() if start else None,
            end_date=end.date() if end else None,
            agent_id=agent,
        )
    console.print(view.usage_table(report))
    console.print(view.usage_chart(report, metric=metric))
