"""`atrium spaces list|get|create|update|delete`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from atrium.client.cli._help import App
from atrium.client.cli._records import (
    PageOption,
    PerPageOption,
    SearchOption,
    SortByOption,
    SortOption,
    filters,
    print_records,
)
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    print_result,
)
from atrium.client.records import Space

spaces_app = App(help="Spaces: list, show, create, update, delete.", no_args_is_help=True)
SpaceIdArgument = Annotated[int, typer.Argument(metavar="SPACE_ID", help="Space id.")]
COLORS = ("blue", "purple", "pink", "orange", "green", "teal")
ColorOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=len(COLORS),
        help="1 blue, 2 purple, 3 pink, 4 orange, 5 green, 6 teal.",
        show_default=False,
    ),
]


def spaces_table(spaces: Sequence[Space]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("name")
    table.add_column("color", no_wrap=True)
    table.add_column("created (UTC)", no_wrap=True)
    for space in spaces:
        color = COLORS[space.color - 1] if 1 <= space.color <= len(COLORS) else ""
        table.add_row(
            str(space.id),
            space.name,
            f"{space.color} {color}".strip(),
            space.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


@spaces_app.command("list")
def spaces_list(
    search: SearchOption = None,
    sort_by: SortByOption = "id",
    sort: SortOption = "desc",
    per_page: PerPageOption = "25",
    page: PageOption = 1,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's spaces, newest first."""
    with client(url, api_key) as atrium:
        found = atrium.spaces.list(
            page=page, **filters(search=search, sort_by=sort_by, sort=sort, per_page=per_page)
        )
    print_records(found, noun="spaces", searched=bool(search), table=spaces_table, as_json=as_json)


@spaces_app.command("get")
def spaces_get(
    space_id: SpaceIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One space."""
    with client(url, api_key) as atrium:
        space = atrium.spaces.get(space_id)
    print_result(space, spaces_table([space]), as_json=as_json)


@spaces_app.command("create")
def spaces_create(
    name: Annotated[str, typer.Argument(help="1 to 32 characters, unique in the account.")],
    color: ColorOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Create a space (color 1 unless given)."""
    with client(url, api_key) as atrium:
        space = atrium.spaces.create(name, color=color)
    print_result(space, spaces_table([space]), as_json=as_json)


@spaces_app.command("update")
def spaces_update(
    space_id: SpaceIdArgument,
    name: Annotated[str | None, typer.Option(metavar="TEXT", help="New name.")] = None,
    color: ColorOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Rename a space or change its color; an option not given keeps its value."""
    if name is None and color is None:
        raise typer.BadParameter("give --name or --color", param_hint="options")
    with client(url, api_key) as atrium:
        space = atrium.spaces.update(space_id, name=name, color=color)
    print_result(space, spaces_table([space]), as_json=as_json)


@spaces_app.command("delete")
def spaces_delete(
    space_id: SpaceIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a space."""
    with client(url, api_key) as atrium:
        deleted = atrium.spaces.delete(space_id)
    print_result(deleted, f"Space {deleted.id} deleted.", as_json=as_json)
