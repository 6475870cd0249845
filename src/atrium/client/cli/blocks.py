"""`atrium blocks list|get|set|rm|history`: memory blocks, the texts rendered into runs."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_result,
    print_results,
)
from atrium.client.errors import NotFoundError
from atrium.client.records import Block, BlockVersion

blocks_app = App(
    help="Memory blocks (texts rendered into the runs of agents listing them in config.blocks): "
    "list, show, set, delete, history.",
    no_args_is_help=True,
)
LabelArgument = Annotated[
    str, typer.Argument(metavar="LABEL", help="The block's label, e.g. persona.")
]


def _short(text: str, width: int = 60) -> str:
    line = text.replace("\n", " ⏎ ")
    return line if len(line) <= width else line[: width - 1] + "…"


def blocks_table(blocks: Iterable[Block]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("label", no_wrap=True)
    table.add_column("version", justify="right", no_wrap=True)
    table.add_column("chars", justify="right", no_wrap=True)
    table.add_column("text", overflow="fold")
    table.add_column("updated (UTC)", no_wrap=True)
    for block in blocks:
        table.add_row(
            block.label,
            str(block.version),
            f"{block.chars}/{block.limit}",
            _short(block.value),
            block.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def versions_table(versions: Iterable[BlockVersion]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("version", justify="right", no_wrap=True)
    table.add_column("action", no_wrap=True)
    table.add_column("text", overflow="fold")
    table.add_column("by", overflow="fold")
    table.add_column("when (UTC)", no_wrap=True)
    for version in versions:
        by = (
            f"run {version.run_id} call {version.tool_call_id or '?'}"
            if version.run_id is not None
            else f"key {version.api_key_id}"
        )
        table.add_row(
            str(version.version),
            version.action,
            _short(version.value),
            by,
            version.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


@blocks_app.command("list")
def blocks_list(
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's blocks, newest first."""
    with client(url, api_key) as atrium:
        found = list(atrium.blocks.iter_all())
    print_results(
        found,
        blocks_table,
        as_json=as_json,
        none="No blocks. Add one: atrium blocks set LABEL TEXT",
    )


@blocks_app.command("get")
def blocks_get(
    label: LabelArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """A block's whole text, version and limit."""
    with client(url, api_key) as atrium:
        block = atrium.blocks.get(label)
    if as_json:
        print_json(block)
        return
    print_result(block, blocks_table([block]), as_json=False)
    console.print(block.value, markup=False, highlight=False)


@blocks_app.command("set")
def blocks_set(
    label: LabelArgument,
    value: Annotated[str, typer.Argument(metavar="TEXT", help="The block's whole new text.")],
    limit: Annotated[
        int | None, typer.Option(min=1, help="Most characters (new blocks: 2,000).")
    ] = None,
    if_version: Annotated[
        int | None,
        typer.Option(min=1, help="Refuse (409) when the block is no longer at this version."),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Set a block's text, creating the block when there is none."""
    with client(url, api_key) as atrium:
        try:
            block = atrium.blocks.update(label, value=value, limit=limit, if_version=if_version)
        except NotFoundError:
            if if_version is not None:
                raise
            block = atrium.blocks.create(label, value=value, limit=limit)
    print_result(block, blocks_table([block]), as_json=as_json)


@blocks_app.command("rm")
def blocks_rm(
    label: LabelArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a block (its history stays readable)."""
    with client(url, api_key) as atrium:
        deleted = atrium.blocks.delete(label)
    print_result(deleted, f"Deleted {deleted.label} ({deleted.block_id}).", as_json=as_json)


@blocks_app.command("history")
def blocks_history(
    label: LabelArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Every version of the block, newest first, with the run and tool call or the API key
    that made it."""
    with client(url, api_key) as atrium:
        versions = atrium.blocks.history(label)
    print_results(versions, versions_table, as_json=as_json, none="No history.")
