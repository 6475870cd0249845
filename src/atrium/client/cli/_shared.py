"""What every client command shares: the consoles, the `--url`/`--api-key`/`--json` options,
the client of one command with its errors turned into messages, and JSON output."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console, ConsoleDimensions, RenderableType
from rich.markup import escape
from rich.table import Table

from atrium.client._core import no_api_key
from atrium.client._sync import Client
from atrium.client._table_fit import fit
from atrium.client.errors import (
    APIConnectionError,
    APIError,
    AtriumError,
    ConfigurationError,
    InvalidParameterError,
)

# Output to a file or a pipe without COLUMNS is not cut to rich's 80 columns: a file has no
# width, and the tables of `domains get` or a run's artifacts print their ids whole.
PIPED_WIDTH = 160


class _Console(Console):
    """A console whose width is looked up each time it prints, not once when it is made (typer's
    CliRunner sets COLUMNS for each command it runs): COLUMNS where it is set, else the
    terminal's; `PIPED_WIDTH` for output to no terminal."""

    @property
    def size(self) -> ConsoleDimensions:
        measured = super().size
        columns = os.environ.get("COLUMNS", "")
        if columns.isdigit():
            return ConsoleDimensions(int(columns), measured.height)
        if self.is_terminal:
            return measured
        return ConsoleDimensions(PIPED_WIDTH, measured.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self.width, self.height = new_size


# Lines of text are never wrapped (soft wrap): a path or an id split over two lines breaks
# scripts and copy-paste, and a terminal wraps long lines by itself.
console = _Console(highlight=False, soft_wrap=True)
errors = Console(stderr=True, highlight=False, soft_wrap=True)


def print_table(table: Table) -> None:
    """Print a table within the output's width, its ids whole (`fit`: cut cells shrink, optional
    columns go, a note on stderr names them). A table whose ids alone are wider is printed as
    wide as they need: rich would cut an id to `run_Lk5d…`, which nobody can copy, and a line
    too long for the terminal is wrapped by the terminal instead."""
    needed, left_out = fit(table, console, console.width)
    if left_out:
        errors.print(
            f"[dim]Not shown at {console.width} columns: {escape(', '.join(left_out))}; "
            "--json has every field.[/]"
        )
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

# Server parameter names → the option a user typed, for the parameters that only ever come from
# one option; a command whose parameter may come from an option or a file names it per call.
_OPTION_OF = {
    "start_date": "--from",
    "end_date": "--to",
    "agent_id": "--agent",
    "api_key": "--provider-key / --no-key",
    "headers": "--header",
}


@contextmanager
def client(
    url: str | None, api_key: str | None, *, options: Mapping[str, str] | None = None
) -> Iterator[Client]:
    """A client for one command; API errors become a message and exit status 1. A 400 on a
    parameter names the option that gave it: `options` maps the server's name of each
    parameter this command's options set (`config.temperature`) to the option
    (`--temperature`)."""
    named = {**_OPTION_OF, **(options or {})}
    try:
        if not api_key:
            # Typer has read ATRIUM_API_KEY into `api_key` already; the client's own message
            # would name its Python argument.
            raise no_api_key("--api-key")
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
            parameter = named.get(exc.parameter, exc.parameter)
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
        # The fields the server sent, not the client's defaults for those it leaves out
        # (`"secret": null`): `--json` prints the API's shapes.
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
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
