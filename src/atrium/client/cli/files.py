"""`atrium files upload|list|get|download|rm`: the files an account gives its runs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from atrium.client import _view as view
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_list,
    print_result,
    print_results,
)
from atrium.client.records import File

files_app = App(
    help="Files to give runs: upload, list, show, download, delete.", no_args_is_help=True
)
FileIdArgument = Annotated[str, typer.Argument(metavar="FILE_ID", help="The file's id (file_…).")]


def files_table(files: Iterable[File]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("file", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("type", no_wrap=True)
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("created (UTC)", no_wrap=True)
    for file in files:
        table.add_row(
            file.file_id,
            file.filename,
            file.content_type,
            view.human_bytes(file.size_bytes),
            file.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


@files_app.command("upload")
def files_upload(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH...", help="Files to upload.")],
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Upload files; each is given an id (file_…) to pass to runs (`atrium run --file`)."""
    with client(url, api_key) as atrium:
        made = [atrium.files.upload(path) for path in paths]
    if as_json:
        print_list(made)
    else:
        print_result(made, files_table(made), as_json=False)


@files_app.command("list")
def files_list(
    limit: Annotated[int, typer.Option(min=1, max=100, help="Files per page (at most 100).")] = 20,
    every: Annotated[bool, typer.Option("--all", help="Every file, following the pages.")] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's files, newest first."""
    with client(url, api_key) as atrium:
        found = (
            list(atrium.files.iter_all(limit=limit))
            if every
            else atrium.files.list(limit=limit).data
        )
    print_results(
        found, files_table, as_json=as_json, none="No files. Upload one: atrium files upload PATH"
    )


@files_app.command("get")
def files_get(
    file_id: FileIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """A file's name, sniffed type, size and SHA-256."""
    with client(url, api_key) as atrium:
        found = atrium.files.get(file_id)
    if as_json:
        print_json(found)
        return
    print_result(found, files_table([found]), as_json=False)
    console.print(f"sha256 {found.sha256}")


@files_app.command("download")
def files_download(
    file_id: FileIdArgument,
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Directory to save into (created if needed)."
        ),
    ] = Path("."),
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Save a file into a directory under its own name (SHA-256 checked)."""
    with client(url, api_key) as atrium:
        saved = atrium.files.download(file_id, to=output)
    if as_json:
        print_json({"file_id": file_id, "path": str(saved)})
    else:
        console.print(str(saved))


@files_app.command("rm")
def files_rm(
    file_id: FileIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a file and its bytes."""
    with client(url, api_key) as atrium:
        deleted = atrium.files.delete(file_id)
    print_result(deleted, f"Deleted {deleted.file_id}.", as_json=as_json)
