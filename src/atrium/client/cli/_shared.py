"""What every client command shares: the consoles, the `--url`/`--api-key`/`--json` options,
the client of one command with its errors turned into messages, and JSON output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from atrium.client._sync import Client
from atrium.client.errors import (
    APIConnectionError,
    APIError,
    AtriumError,
    ConfigurationError,
    InvalidParameterError,
)

# Piped output is not cut to 80 columns: ids in tables stay whole. Lines of text are never
# wrapped (soft wrap): a path or an id split over two lines breaks scripts and copy-paste, and
# a terminal wraps long lines by itself.
_PIPED_WIDTH = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 160
console = Console(highlight=False, width=_PIPED_WIDTH, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def print_table(table: Table) -> None:
    """Print a table no narrower than its unbreakable cells need. On a narrow terminal rich
    would cut an id to `run_Lk5d…`, which nobody can copy; a line too long for the terminal
    is wrapped by the terminal instead."""
    unbounded = console.options.update_width(10_000)
    for column in table.columns:
        if column.no_wrap:  # a no-wrap cell is unbreakable: rich measures it by its words
            cells = [column.header, *column.cells]
            widest = max(Measurement.get(console, unbounded, cell).maximum for cell in cells)
            column.min_width = min(widest, column.max_width or widest)
    needed = Measurement.get(console, unbounded, table).minimum
    if needed <= console.width:
        console.print(table)
        return
    # `print(width=…)` never goes beyond the console's width: a console as wide as the table.
    wide = Console(
        file=console.file,
        width=needed,
        highlight=False,
        soft_wrap=True,
        force_terminal=console.is_terminal,
        color_system=console.color_system,  # type: ignore[arg-type]
        no_color=console.no_color,
    )
    wide.print(table)


UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        envvar="ATRIUM_URL",
        metavar="URL",
        help="Server address (default http://127.0.0.1:8000).",
        show_default=False,
    ),
]
KeyOption = Annotated[
    str | None,
    typer.Option(
        "--api-key",
        envvar="ATRIUM_API_KEY",
        metavar="KEY",
        help="API key (atr_…).",
        show_default=False,
    ),
]
RunIdArgument = Annotated[str, typer.Argument(metavar="RUN_ID", help="Run id (run_…).")]

JsonOption = Annotated[
    bool,
    typer.Option(
        "--json", help="Print the result as JSON on stdout (the API's shapes), for scripts."
    ),
]

CLI_STREAM_RECONNECTS = 70

# Server parameter names → the option a user typed.
_OPTION_OF = {
    "start_date": "--from",
    "end_date": "--to",
    "agent_id": "--agent",
    "config.model": "--model",
    "config.tools": "--tools-file / --tool",
    "config.output_schema": "--output-schema-file",
    "api_key": "--provider-key / --no-key",
    "headers": "--header",
}


@contextmanager
def client(url: str | None, api_key: str | None) -> Iterator[Client]:
    """A client for one command; API errors become a message and exit status 1."""
    try:
        # A person following a run would rather wait out a server restart than be dropped:
        # about five minutes of reconnects (Ctrl-C detaches at any time).
        with Client(url, api_key, stream_reconnects=CLI_STREAM_RECONNECTS) as opened:
            yield opened
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


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def print_json(value: Any) -> None:
    """`value` (models, lists and dicts of them) as indented JSON on stdout."""
    sys.stdout.write(json.dumps(_plain(value), indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def print_list(items: Iterable[Any], **extra: Any) -> None:
    """A list as the API writes one: `{"data": [...], ...extra}`."""
    print_json({"data": list(items), **extra})


T = TypeVar("T")


def print_result(value: Any, human: RenderableType, *, as_json: bool) -> None:
    """A command's result: `value` in the API's JSON shape with `--json` (for scripts), else
    `human` for people (a table as wide as its ids need, as `print_table` prints it)."""
    if as_json:
        print_json(value)
    elif isinstance(human, Table):
        print_table(human)
    else:
        console.print(human)


def print_results(
    items: Sequence[T], table: Callable[[Sequence[T]], Table], *, as_json: bool, none: str
) -> None:
    """A list command's result: `{"data": [...]}` with `--json`, else the items' `table`, or
    `none` (what to do next) when there are none."""
    if as_json:
        print_list(items)
    elif not items:
        console.print(none)
    else:
        print_table(table(items))


def read_json_file(path: Path, *, option: str) -> Any:
    """The JSON in `path` (`-`: standard input); a usage error (status 2) naming `option`
    when it cannot be read or is not JSON."""
    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except OSError as exc:
        raise typer.BadParameter(f"cannot read {path}: {exc.strerror}", param_hint=option) from exc
    try:
        return json.loads(text)
    except ValueError as exc:
        raise typer.BadParameter(f"{path} is not JSON: {exc}", param_hint=option) from exc
