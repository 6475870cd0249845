"""What the `domains` and `spaces` commands share: phpShort's list options (search, sort, page
size, page), and how a page of records is printed with the footer that says where the other
pages are."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar

import typer
from rich.table import Table

from atrium.client._calls import ListFilters
from atrium.client.cli._shared import console, errors, print_json, print_table
from atrium.client.records import Page

R = TypeVar("R")

SearchOption = Annotated[
    str | None, typer.Option(metavar="TEXT", help="Only names containing TEXT (any case).")
]
SortByOption = Annotated[
    Literal["id", "name"],
    typer.Option("--sort-by", metavar="id|name", help="Date created (id) or name."),
]
SortOption = Annotated[
    Literal["desc", "asc"], typer.Option("--sort", metavar="desc|asc", help="Order.")
]
PerPageOption = Annotated[
    Literal["10", "25", "50", "100"],
    typer.Option("--per-page", metavar="10|25|50|100", help="Records per page."),
]
PageOption = Annotated[int, typer.Option(min=1, help="Which page (from 1).")]


def filters(*, search: str | None, sort_by: str, sort: str, per_page: str) -> ListFilters:
    """The list call's filters, as the options gave them."""
    return ListFilters(
        search=search,
        search_by="name" if search else None,
        sort_by="name" if sort_by == "name" else "id",
        sort="asc" if sort == "asc" else "desc",
        per_page=int(per_page),
    )


def more_pages(page: Page[Any], *, again: str, noun: str) -> None:
    """On stderr, under a page of a longer list: where it is and how to ask for the next."""
    meta = page.meta
    if meta.last_page <= 1:
        return
    note = f"Page {meta.current_page} of {meta.last_page} ({meta.total} {noun})."
    if page.has_next:
        note += f" Next: {again} --page {meta.current_page + 1}"
    errors.print(f"[dim]{note}[/]")


def print_records(
    page: Page[R],
    *,
    noun: str,
    searched: bool,
    table: Callable[[Sequence[R]], Table],
    as_json: bool,
) -> None:
    """A page of `atrium NOUN list`: its JSON, or its table and where the other pages are, or
    what to do when it is empty."""
    if as_json:
        print_json(page)
        return
    if not page.data:
        empty = f"No {noun} yet. Add one: atrium {noun} create NAME"
        console.print(f"No {noun} match." if searched else empty)
        return
    print_table(table(page.data))
    more_pages(page, again=f"atrium {noun} list", noun=noun)
