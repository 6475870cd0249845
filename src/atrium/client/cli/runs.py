"""`atrium run` and `atrium runs …`: start a run and follow it live, list, show, cancel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from atrium.client import _view as view
from atrium.client._sync import Client
from atrium.client.cli import actions
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    RunIdArgument,
    UrlOption,
    client,
    console,
    errors,
    print_json,
    print_result,
    print_table,
)
from atrium.client.errors import StreamError, WaitTimeoutError
from atrium.client.records import (
    TERMINAL_STATUSES,
    IfBusy,
    MessageDelta,
    Run,
    RunEvent,
    RunPage,
    RunRequiresAction,
    RunRestarted,
    ToolCalled,
    ToolReturned,
)

runs_app = App(help="Agent runs: list, show, follow, answer, cancel.", no_args_is_help=True)
AgentOption = Annotated[
    str | None, typer.Option("--agent", metavar="AGENT_ID", help="Only this agent's runs.")
]


# --- atrium run -----------------------------------------------------------------------------------
RunAgentOption = Annotated[
    str | None,
    typer.Option("--agent", metavar="AGENT_ID", help="Agent id (default: the account's default)."),
]
ThreadOption = Annotated[
    str | None,
    typer.Option("--thread", metavar="THREAD_ID", help="Continue this thread (thr_…)."),
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        metavar="PROVIDER:MODEL",
        help="Model for this run only, e.g. openai:gpt-4o-mini (docs/guide/models.md); "
        "default: the agent's.",
    ),
]
IfBusyOption = Annotated[
    str | None,
    typer.Option(
        "--if-busy",
        metavar="POLICY",
        help="With --thread, when the thread still has an unfinished run: enqueue (the "
        "default: wait behind it), reject (fail, THREAD_BUSY), interrupt (cancel it, keeping "
        "what it produced in the thread) or rollback (cancel it and drop it).",
    ),
]
FollowOption = Annotated[
    bool,
    typer.Option(
        "--follow/--no-follow",
        help="Stream the run live until it finishes (default), or print only its id and exit.",
    ),
]
FileOption = Annotated[
    list[str] | None,
    typer.Option(
        "--file",
        metavar="PATH|FILE_ID",
        help="Give the run a file (repeat): a path is uploaded first, a file_… id is used "
        "as it is. Images and PDFs go to the model as such, text inline.",
    ),
]
ImageUrlOption = Annotated[
    list[str] | None,
    typer.Option(
        "--image-url", metavar="URL", help="Give the run an image at a public URL (repeat)."
    ),
]


def run(
    prompt: Annotated[str, typer.Argument(help="The task for the agent.")],
    agent: RunAgentOption = None,
    thread: ThreadOption = None,
    model: ModelOption = None,
    if_busy: IfBusyOption = None,
    follow: FollowOption = True,
    files: FileOption = None,
    image_urls: ImageUrlOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Start an agent run and follow it live: status, model text, artifacts, credits.
    With --json, wait for the end and print the finished run (with --no-follow: the new one)."""
    config: dict[str, Any] | None = {"model": model} if model is not None else None
    options = {"config.model": "--model", "if_busy": "--if-busy", "file": "--file"}
    with client(url, api_key, options=options) as atrium:
        parts = _input_parts(atrium, files or [], image_urls or [])
        created = atrium.runs.create(
            prompt,
            agent_id=agent,
            thread_id=thread,
            config=config,
            # The server names the policies it takes (a 400 on --if-busy lists them).
            if_busy=cast(IfBusy | None, if_busy),
            input=parts or None,
        )
        if not follow:
            _print_started(created, as_json=as_json)
            return
        if as_json:
            _print_finished(atrium.runs.wait(created.run_id))
            return
        _follow(atrium, created)


def _print_started(created: Run, *, as_json: bool) -> None:
    """`--no-follow`: the new run as JSON, or only its id on stdout, for
    `run_id=$(atrium run "…" --no-follow)`."""
    if as_json:
        print_json(created)
        return
    print(created.run_id, flush=True)
    errors.print(f"[dim]Follow it: atrium runs follow {created.run_id}[/]")


def _input_parts(atrium: Client, files: list[str], image_urls: list[str]) -> list[dict[str, str]]:
    """`--file` and `--image-url` as the run's input parts; paths are uploaded first."""
    parts: list[dict[str, str]] = []
    for given in files:
        path = Path(given)
        if given.startswith("file_") and not path.exists():
            parts.append({"type": "file", "file_id": given})
            continue
        if not path.is_file():
            errors.print(f"[red]error:[/] --file {escape(given)}: no such file")
            raise typer.Exit(2)
        uploaded = atrium.files.upload(path)
        errors.print(f"[dim]Uploaded {escape(given)} as {uploaded.file_id}[/]")
        parts.append({"type": "file", "file_id": uploaded.file_id})
    parts.extend({"type": "image", "url": image_url} for image_url in image_urls)
    return parts


def _print_finished(finished: Run) -> None:
    print_json(finished)
    if finished.waiting:  # requires_action: answer with `atrium runs act RUN_ID`
        raise typer.Exit(3)
    if finished.status != "completed":
        raise typer.Exit(1)


@runs_app.command("follow")
def runs_follow(
    run_id: RunIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Attach to a run: replay its events so far, then follow it live until it finishes.
    With --json, wait for the end and print the finished run."""
    with client(url, api_key) as atrium:
        if as_json:
            _print_finished(atrium.runs.wait(run_id))
            return
        found = atrium.runs.get(run_id)
        # Attaching to a run started elsewhere: say what it is doing (notes on stderr when
        # stdout is the model's text for a pipe).
        (console if console.is_terminal else errors).print(view.run_header(found))
        _follow(atrium, found)


def _follow(atrium: Client, run: Run) -> None:
    live_view = view.RunView(console, run)
    plain = _PlainView()
    last_id: int | None = None
    try:
        if not console.is_terminal:
            errors.print(f"{run.run_id} {run.status} {run.model}".rstrip())
        # A run that waits for its caller stops the view for questions, then follows on.
        while True:
            last_id = _follow_until_wait(atrium, run, live_view, plain, last_id)
            if last_id is None:
                break
            waiting = atrium.runs.get(run.run_id)
            if waiting.waiting:
                try:
                    actions.answer(atrium, waiting, errors)
                except actions.NoAnswer:
                    errors.print(
                        f"\n{run.run_id} waits for your answer.\n"
                        f"Answer it later: atrium runs act {run.run_id}"
                    )
                    raise typer.Exit(3) from None
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
    finished = atrium.runs.get(run.run_id)
    if live_view.wrote_text or plain.wrote_text:
        console.print()
    if isinstance(finished.result, dict):  # an output schema's answer: no text was streamed
        console.print_json(data=finished.result)
    view.summary(console, finished, live_view.elapsed())
    if finished.status != "completed":
        raise typer.Exit(1)


def _follow_until_wait(
    atrium: Client, run: Run, live_view: view.RunView, plain: _PlainView, after: int | None
) -> int | None:
    """Follow the stream from after event `after`; the id of a `run.requires_action` event
    that stopped it, or None when the run finished."""
    terminal = console.is_terminal
    stream = atrium.runs.stream(
        run.run_id,
        last_event_id=after,
        on_reconnect=live_view.reconnecting if terminal else plain.reconnecting,
    )
    stopped_at: int | None = None
    try:
        if terminal:
            with Live(live_view, console=console, refresh_per_second=12, transient=True):
                for event in stream:
                    live_view.apply(event)
                    if event.event == "run.requires_action":
                        stopped_at = event.id
                        break
            live_view.flush_text()
        else:
            for event in stream:
                plain.apply(event)
                if event.event == "run.requires_action":
                    stopped_at = event.id
                    break
    finally:
        close = getattr(stream, "close", None)
        if close is not None:  # a generator: closing it closes its connection
            close()
    return stopped_at


class _PlainView:
    """Without a terminal: model text to stdout as it arrives, progress notes to stderr."""

    def __init__(self) -> None:
        self.wrote_text = False
        self._open_line = False  # model text written that did not end its line
        self._tools = view.ToolLines()
        self._retries = view.Retries()

    def apply(self, event: RunEvent) -> None:
        retried = self._retries.see(event)
        if retried is not None:  # the text above was sent back: the retry's starts a line
            self._end_line()
            errors.print(f"[yellow]{view.retry_note(retried)}[/]")
        if isinstance(event, MessageDelta):
            self.wrote_text = True
            console.file.write(event.text)
            console.file.flush()
            self._open_line = bool(event.text) and not event.text.endswith("\n")
        elif isinstance(event, RunRestarted):
            self._end_line()
            errors.print(f"[yellow]{view.restart_note(event.attempt)}[/]")
        elif isinstance(event, ToolCalled | ToolReturned):
            self._end_line()
            errors.print(self._tools.line(event), soft_wrap=True, highlight=False)
        elif event.event in ("run.started", "artifact.created", "run.requires_action") or (
            event.terminal
        ):
            if isinstance(event, RunRequiresAction):
                self._tools.expect(event.required_action)
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
        str | None,
        typer.Option(
            metavar="STATUS",
            help="queued, running, requires_action, completed, failed or cancelled.",
        ),
    ] = None,
    agent: AgentOption = None,
    thread: Annotated[
        str | None, typer.Option("--thread", metavar="THREAD_ID", help="Only this thread.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Runs per page (at most 100).")] = 20,
    cursor: Annotated[
        str | None,
        typer.Option(
            metavar="CURSOR", help="Start after the page that printed this cursor (next page)."
        ),
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every matching run, following the pages.")
    ] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The latest runs, newest first, a page at a time: the next page is
    `--cursor` with the cursor printed under the table (or `next_cursor` with --json)."""
    with client(url, api_key) as atrium:
        if every:
            found = list(
                atrium.runs.iter_all(status=status, agent_id=agent, thread_id=thread, limit=limit)
            )
            page = RunPage(data=found, has_more=False, next_cursor=None)
        else:
            page = atrium.runs.list(
                status=status, agent_id=agent, thread_id=thread, limit=limit, cursor=cursor
            )
    if as_json:
        print_json(page)
        return
    if not page.data:
        if any(value is not None for value in (status, agent, thread)):
            console.print("No runs match these filters.")
        elif cursor is not None:
            console.print("No more runs.")
        else:
            console.print('No runs yet. Start one: atrium run "your prompt"')
        return
    print_table(view.runs_table(page.data))
    if page.has_more and page.next_cursor:
        given = {"--status": status, "--agent": agent, "--thread": thread}
        again = "".join(f" {option} {value}" for option, value in given.items() if value)
        if limit != 20:
            again += f" --limit {limit}"
        errors.print(
            f"[dim]More runs: atrium runs list{again} --cursor {page.next_cursor} (or --all)[/]"
        )


@runs_app.command("get")
def runs_get(
    run_id: RunIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One run: prompt, model, status, result, artifacts, credits."""
    with client(url, api_key) as atrium:
        found = atrium.runs.get(run_id)
    if as_json:
        print_json(found)
        return
    console.print(view.run_header(found))
    if isinstance(found.result, dict):  # an agent with an output schema
        console.print_json(data=found.result)
    elif found.result:
        console.print(Text(found.result))
    view.summary(console, found)
    if found.waiting:
        actions.show_wait(found, console)


@runs_app.command("act")
def runs_act(
    run_id: RunIdArgument,
    approve: Annotated[
        list[str] | None,
        typer.Option("--approve", metavar="CALL_ID", help="Approve this call (repeat)."),
    ] = None,
    deny: Annotated[
        list[str] | None,
        typer.Option("--deny", metavar="CALL_ID", help="Deny this call (repeat)."),
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why the calls are denied (the model reads it).")
    ] = None,
    output: Annotated[
        list[str] | None,
        typer.Option("--output", metavar="CALL_ID=TEXT", help="A function call's output."),
    ] = None,
    output_file: Annotated[
        list[str] | None,
        typer.Option(
            "--output-file", metavar="CALL_ID=PATH", help="A function call's output, from a file."
        ),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Answer a run that waits for you (requires_action): approve or deny its MCP calls, give
    its function calls' outputs. Calls not answered by options are asked about."""
    preset = actions.Preset.of(
        approve=approve, deny=deny, outputs=output, output_files=output_file, reason=reason
    )
    with client(url, api_key) as atrium:
        found = atrium.runs.get(run_id)
        if not found.waiting:
            errors.print(f"[red]error:[/] {run_id} is {found.status}, not waiting for you")
            raise typer.Exit(1)
        try:
            answered = actions.answer(atrium, found, errors, preset)
        except actions.NoAnswer:
            errors.print("[red]error:[/] input ended before every call was answered")
            raise typer.Exit(1) from None
    if as_json:
        print_json(answered)
        return
    console.print(Text.assemble((answered.run_id, "bold"), "  ", view.status_text(answered.status)))
    errors.print(f"[dim]Follow it: atrium runs follow {answered.run_id}[/]")


@runs_app.command("cancel")
def runs_cancel(
    run_id: RunIdArgument,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait/--no-wait",
            help="Wait for the run to stop and print its final status (default), or return "
            "once the cancel is requested.",
        ),
    ] = True,
    timeout: Annotated[
        float, typer.Option(min=0, help="Longest wait for the run to stop, in seconds.")
    ] = 60.0,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Cancel a queued or running run: prints `cancel requested`, then the status it ends in
    (a running run stops at its next step). A finished run cannot be cancelled (status 1)."""
    with client(url, api_key) as atrium:
        cancelled = atrium.runs.cancel(run_id)
        if not as_json:
            console.print(Text.assemble((cancelled.run_id, "bold"), "  cancel requested"))
        if cancelled.status not in TERMINAL_STATUSES and wait:
            try:
                cancelled = atrium.runs.wait(run_id, timeout=timeout)
            except WaitTimeoutError as exc:
                errors.print(
                    f"[yellow]{escape(str(exc))}; it stops at its next step: "
                    f"atrium runs get {run_id}[/]"
                )
                raise typer.Exit(1) from exc
    status = Text.assemble((cancelled.run_id, "bold"), "  ", view.status_text(cancelled.status))
    print_result(cancelled, status, as_json=as_json)
