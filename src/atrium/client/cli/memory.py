"""`atrium memory put|get|list|search|rm|history`: the account's memory store."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any, Literal

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
from atrium.client.records import MemoryHistoryEntry, MemoryItem

memory_app = App(
    help="The memory store: put, show, list, search, delete items, and each item's history.",
    no_args_is_help=True,
)
NamespaceArgument = Annotated[
    str, typer.Argument(metavar="NAMESPACE", help="Segments joined by '/', e.g. users/alice.")
]
ItemIdArgument = Annotated[str, typer.Argument(metavar="ITEM_ID", help="The item's id (mem_…).")]
PrefixOption = Annotated[
    str | None,
    typer.Option("--namespace", "-n", metavar="PREFIX", help="Only under this namespace prefix."),
]


def _value_text(value: Any, width: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def items_table(items: Iterable[MemoryItem]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("item", no_wrap=True)
    table.add_column("namespace", overflow="fold")
    table.add_column("key", overflow="fold")
    table.add_column("value", overflow="fold")
    table.add_column("updated (UTC)", no_wrap=True)
    for item in items:
        table.add_row(
            item.item_id,
            "/".join(item.namespace),
            item.key,
            _value_text(item.value),
            item.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def history_table(entries: Iterable[MemoryHistoryEntry]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("when (UTC)", no_wrap=True)
    table.add_column("action", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("by", overflow="fold")
    for entry in entries:
        table.add_row(
            entry.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            entry.action,
            "" if entry.value is None else _value_text(entry.value),
            writer(entry),
        )
    return table


def writer(entry: MemoryHistoryEntry) -> str:
    """Who made a version: a run's tool call, or an API key."""
    if entry.run_id is not None:
        return f"run {entry.run_id} call {entry.tool_call_id or '?'}"
    return f"key {entry.api_key_id}" if entry.api_key_id is not None else "?"


def _value(text: str) -> Any:
    """A value given on the command line: JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


@memory_app.command("put")
def memory_put(
    namespace: NamespaceArgument,
    key: Annotated[str, typer.Argument(metavar="KEY", help="The item's key in its namespace.")],
    value: Annotated[
        str, typer.Argument(metavar="VALUE", help="JSON, or any other text as a string.")
    ],
    text: Annotated[
        str | None, typer.Option(help="What search reads (default: the value's text).")
    ] = None,
    ttl: Annotated[
        int | None, typer.Option("--ttl", min=1, help="Forget it after this many seconds.")
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Create or replace the item under NAMESPACE and KEY."""
    with client(url, api_key) as atrium:
        item = atrium.memory.put(namespace, key, _value(value), text=text, ttl_seconds=ttl)
    print_result(item, items_table([item]), as_json=as_json)


@memory_app.command("get")
def memory_get(
    item_or_namespace: Annotated[
        str, typer.Argument(metavar="ITEM_ID|NAMESPACE", help="An item id, or a namespace.")
    ],
    key: Annotated[
        str | None, typer.Argument(metavar="[KEY]", help="With a namespace: the item's key.")
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """An item with its whole value: by id, or by NAMESPACE and KEY."""
    with client(url, api_key) as atrium:
        item = (
            atrium.memory.get(item_or_namespace)
            if key is None
            else atrium.memory.get_by_key(item_or_namespace, key)
        )
    if as_json:
        print_json(item)
        return
    print_result(item, items_table([item]), as_json=False)
    console.print_json(json.dumps(item.value, ensure_ascii=False))


@memory_app.command("list")
def memory_list(
    prefix: Annotated[
        str, typer.Argument(metavar="[PREFIX]", help="A namespace prefix; default: all.")
    ] = "",
    limit: Annotated[int, typer.Option(min=1, max=200, help="Items per page (at most 200).")] = 50,
    every: Annotated[bool, typer.Option("--all", help="Every item, following the pages.")] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Live items under PREFIX, newest first."""
    with client(url, api_key) as atrium:
        found = (
            list(atrium.memory.iter_all(namespace_prefix=prefix, limit=limit))
            if every
            else atrium.memory.list(namespace_prefix=prefix, limit=limit).data
        )
    print_results(
        found,
        items_table,
        as_json=as_json,
        none="No items. Add one: atrium memory put NS KEY VALUE",
    )


@memory_app.command("search")
def memory_search(
    query: Annotated[str, typer.Argument(metavar="QUERY", help="Words the text must hold.")],
    prefix: PrefixOption = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="At most this many.")] = 10,
    mode: Annotated[
        Literal["text", "semantic"],
        typer.Option(
            help="text: every word of QUERY; semantic: nearest in meaning (the server needs "
            "ATRIUM_EMBEDDINGS_MODEL)."
        ),
    ] = "text",
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Live items whose text holds every word of QUERY (or nearest in meaning), best first."""
    with client(url, api_key) as atrium:
        found = atrium.memory.search(query, namespace_prefix=prefix, limit=limit, mode=mode)
    print_results(found, items_table, as_json=as_json, none="Nothing found.")


@memory_app.command("rm")
def memory_rm(
    item_id: ItemIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Forget an item (its history keeps the delete)."""
    with client(url, api_key) as atrium:
        deleted = atrium.memory.delete(item_id)
    print_result(deleted, f"Deleted {deleted.item_id}.", as_json=as_json)


@memory_app.command("history")
def memory_history(
    item_id: ItemIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Every write and delete of an item, newest first, with the run and tool call or the API
    key that made it."""
    with client(url, api_key) as atrium:
        entries = atrium.memory.history(item_id)
    print_results(entries, history_table, as_json=as_json, none="No history.")
