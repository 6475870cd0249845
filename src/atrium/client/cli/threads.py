"""`atrium threads list|create|get|messages|fork|compact|delete`: conversations, read as
transcripts, forked, compacted and deleted."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from atrium.client._view import credits_text
from atrium.client.cli._conversation import thread_details, threads_table, transcript
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    errors,
    print_json,
    print_result,
    print_table,
)
from atrium.client.records import ThreadMessagePage, ThreadPage

threads_app = App(help="Threads (conversations): list, read, fork, delete.", no_args_is_help=True)
ThreadArgument = Annotated[str, typer.Argument(metavar="THREAD_ID", help="Thread id (thr_…).")]
MetadataOption = Annotated[
    list[str] | None,
    typer.Option(
        "--metadata",
        metavar="KEY=VALUE",
        help="A metadata key and its text value (repeat).",
        show_default=False,
    ),
]
LimitOption = Annotated[
    int | None, typer.Option(min=1, max=100, help="Items per page (at most 100).")
]
CursorOption = Annotated[
    str | None,
    typer.Option(
        metavar="CURSOR", help="Start after the page that printed this cursor (next page)."
    ),
]


def _pairs(given: list[str] | None) -> dict[str, str] | None:
    """`KEY=VALUE` options as a mapping; a usage error naming --metadata for another shape."""
    if given is None:
        return None
    pairs: dict[str, str] = {}
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise typer.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--metadata")
        pairs[key] = value
    return pairs


@threads_app.command("list")
def threads_list(
    agent: Annotated[
        str | None,
        typer.Option("--agent", metavar="AGENT_ID", help="Only threads with a run of this agent."),
    ] = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata",
            metavar="KEY=VALUE",
            help="Only threads whose metadata has KEY with this text value (repeat: all match).",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=100, help="Threads per page (at most 100).")
    ] = 20,
    cursor: CursorOption = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every matching thread, following the pages.")
    ] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's threads, newest first, a page at a time: the next page is `--cursor`
    with the cursor printed under the table (or `next_cursor` with --json)."""
    filters = _pairs(metadata)
    # The server names a malformed filter by its query parameter, `metadata[KEY]`.
    options = {f"metadata[{key}]": f"--metadata {key}=…" for key in filters or {}}
    with client(url, api_key, options=options) as atrium:
        if every:
            found = list(atrium.threads.iter_all(agent_id=agent, metadata=filters, limit=limit))
            page = ThreadPage(data=found, has_more=False, next_cursor=None)
        else:
            page = atrium.threads.list(agent_id=agent, metadata=filters, limit=limit, cursor=cursor)
    if as_json:
        print_json(page)
        return
    if not page.data:
        if agent is not None or filters:
            console.print("No threads match these filters.")
        elif cursor is not None:
            console.print("No more threads.")
        else:
            console.print('No threads yet. A run starts one: atrium run "your prompt"')
        return
    print_table(threads_table(page.data))
    if page.has_more and page.next_cursor:
        again = f" --agent {agent}" if agent else ""
        again += "".join(f" --metadata {item}" for item in metadata or [])
        if limit != 20:
            again += f" --limit {limit}"
        errors.print(
            f"[dim]More threads: atrium threads list{again} --cursor {page.next_cursor} "
            "(or --all)[/]"
        )


@threads_app.command("create")
def threads_create(
    metadata: MetadataOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """A new, empty thread; its runs are started with `atrium run "…" --thread THREAD_ID`."""
    with client(url, api_key, options={"metadata": "--metadata"}) as atrium:
        created = atrium.threads.create(metadata=_pairs(metadata))
    if as_json:
        print_json(created)
        return
    # Only the id on stdout: `thread=$(atrium threads create)`.
    print(created.id, flush=True)
    errors.print(f'[dim]Start its first run: atrium run "…" --thread {created.id}[/]')


@threads_app.command("get")
def threads_get(
    thread_id: ThreadArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One thread: status, metadata, counts, its newest run, where it was forked from."""
    with client(url, api_key) as atrium:
        found = atrium.threads.get(thread_id)
    if as_json:
        print_json(found)
        return
    console.print(thread_details(found))
    errors.print(f"[dim]Its conversation: atrium threads messages {found.id}[/]")


@threads_app.command("messages")
def threads_messages(
    thread_id: ThreadArgument,
    limit: LimitOption = None,
    cursor: CursorOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The conversation as the model is given it, oldest first: prompts, answers, tool calls
    and their results, summaries (with the items they stand in for dimmed). The whole
    conversation, or one page with --limit or --cursor."""
    paged = limit is not None or cursor is not None
    with client(url, api_key) as atrium:
        if paged:
            page = atrium.threads.messages(thread_id, limit=limit, cursor=cursor)
        else:
            found = list(atrium.threads.iter_messages(thread_id, limit=100))
            page = ThreadMessagePage(data=found, has_more=False, next_cursor=None)
    if as_json:
        print_json(page)
        return
    if not page.data:
        console.print(
            "No more messages."
            if cursor is not None
            else "No messages yet: no run of this thread has completed."
        )
        return
    console.print(transcript(page.data))
    if page.has_more and page.next_cursor:
        again = f" --limit {limit}" if limit is not None else ""
        errors.print(
            f"[dim]More: atrium threads messages {thread_id}{again} --cursor {page.next_cursor}[/]"
        )


@threads_app.command("fork")
def threads_fork(
    thread_id: ThreadArgument,
    at: Annotated[
        str | None,
        typer.Option(
            "--at",
            metavar="RUN_ID",
            help="The last run of the history the fork starts from (default: the thread's "
            "last completed run).",
        ),
    ] = None,
    metadata: Annotated[
        list[str] | None,
        typer.Option(
            "--metadata",
            metavar="KEY=VALUE",
            help="The fork's metadata (repeat; default: a copy of the thread's).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """A new thread whose history is this thread's up to and including a run; the thread
    itself is not changed. Prints the new thread's id."""
    options = {"at_run_id": "--at", "metadata": "--metadata"}
    with client(url, api_key, options=options) as atrium:
        fork = atrium.threads.fork(thread_id, at_run_id=at, metadata=_pairs(metadata))
    if as_json:
        print_json(fork)
        return
    print(fork.id, flush=True)
    errors.print(f'[dim]Go on in the fork: atrium run "…" --thread {fork.id}[/]')


@threads_app.command("compact")
def threads_compact(
    thread_id: ThreadArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Summarise the thread's history now, but for its newest runs, with the model of its
    newest run: its next runs are given the summary in place of what it covers (the originals
    stay listed, marked compacted). A thread with an unfinished run cannot be compacted."""
    with client(url, api_key) as atrium:
        done = atrium.threads.compact(thread_id)
    if as_json:
        print_json(done)
        return
    if not done.compacted:
        console.print(f"Nothing to compact: {thread_id} has no history older than its newest runs.")
        return
    note = Text.assemble(
        ("Compacted ", "bold"), f"through {done.through_run_id or 'the copied history'}"
    )
    if done.billing is not None:
        note.append(f" ({credits_text(done.billing.credits)} credits)", style="dim")
    console.print(note)
    console.print(Text(done.text or ""))
    errors.print(f"[dim]The conversation: atrium threads messages {thread_id}[/]")


@threads_app.command("rm", hidden=True)
@threads_app.command("delete")
def threads_delete(
    thread_id: ThreadArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a thread with its runs, their events and artifacts (usage stays). Its unfinished
    runs are cancelled first. `atrium threads rm` is the same command."""
    with client(url, api_key) as atrium:
        deleted = atrium.threads.delete(thread_id)
    print_result(deleted, Text(f"Thread {deleted.id} deleted."), as_json=as_json)
