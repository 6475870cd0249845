"""The `atrium` command: serve, worker, migrate, keys, and the client's commands.

The server-side commands import `atrium.operations` (and with it the server) when they run:
a client command such as `atrium run` then starts in a third of the time
(docs/decisions/0015-imports-on-first-use.md).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from atrium.client.cli import App
from atrium.client.cli import register as register_client_commands
from atrium.client.cli._shared import JsonOption, print_json, print_list

if TYPE_CHECKING:
    from atrium.db.migrate import Upgraded
    from atrium.settings import Settings

app = App(
    help="atrium: self-hosted domains, spaces, agents and durable agent runs.", no_args_is_help=True
)
keys_app = App(help="Manage API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
register_client_commands(app)
console = Console()
# Notes about what a command does (which database it opened) go to stderr: stdout stays the
# command's answer, e.g. only the key of `atrium keys create`, for scripts.
notes = Console(stderr=True, soft_wrap=True)


def _settings() -> Settings:
    """The environment's settings; a wrong value ends the command with the variable it came
    from and why, instead of a traceback."""
    from pydantic import ValidationError
    from pydantic_settings import SettingsError
    from rich.markup import escape

    # Imported here: the client commands, most of what a user types, never need the server's
    # settings (pydantic-settings and the settings module were a fifth of their start).
    from atrium.settings import get_settings

    try:
        return get_settings()
    except ValidationError as invalid:
        for error in invalid.errors():
            name = "ATRIUM_" + "_".join(str(part) for part in error["loc"][:1]).upper()
            notes.print(f"[red]Invalid setting[/] {name}: {escape(error['msg'])}", highlight=False)
        raise typer.Exit(2) from None
    except SettingsError as unreadable:  # a JSON setting (a list, an object) that is not JSON
        field = re.search(r'field "(\w+)"', str(unreadable))
        name = "ATRIUM_" + (field.group(1).upper() if field else "…")
        notes.print(f"[red]Invalid setting[/] {name}: not valid JSON", highlight=False)
        raise typer.Exit(2) from None


def _open_database() -> Settings:
    """The settings of a server-side command, its database migrated, and a note saying where
    that database is (a command started from another folder must not look empty by surprise)."""
    return _migrate_database()[0]


def _migrate_database() -> tuple[Settings, Upgraded]:
    from atrium.db.files import database_location
    from atrium.db.migrate import migrate

    settings = _settings()
    notes.print(f"Database: {database_location(settings.database_url)}", highlight=False)
    return settings, migrate(settings)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    no_worker: Annotated[bool, typer.Option("--no-worker", help="Serve the API only.")] = False,
) -> None:
    """Apply migrations, create the first key on an empty database, and serve the API."""
    from atrium import operations
    from atrium.observability.logs import configure_logging

    configure_logging(_settings())
    settings = _open_database()
    issued = operations.bootstrap(settings)
    if issued is not None:
        console.print(
            f"[bold green]Created account 'default'.[/] API key (shown once):\n{issued.key}",
            soft_wrap=True,
        )
    _note_default_model(settings)
    if no_worker:
        console.print("Serving the API only (--no-worker).")
        settings = settings.model_copy(update={"run_worker": False})
    if "public_url" not in settings.model_fields_set:
        # Links in responses (a run's status_url) point at this server, not at the default
        # port, unless ATRIUM_PUBLIC_URL says where clients reach it.
        settings = settings.model_copy(update={"public_url": _local_url(host, port)})
    operations.serve(settings, host=host, port=port)


def _local_url(host: str, port: int) -> str:
    """This server's URL on this machine: a wildcard bind is reached through loopback."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _note_default_model(settings: Settings) -> None:
    """Which model new agents get, and what it lacks if it cannot run (docs/guide/models.md)."""
    from rich.markup import escape

    from atrium.agents.model_check import model_problem

    problem = model_problem(settings.default_model, settings)
    note = f"Default model: {settings.default_model}"
    if problem is not None:
        note += f" [yellow](unusable: {escape(problem)}; see docs/guide/models.md)[/]"
    elif settings.default_model == "atrium:offline":
        note += " [dim](built in; a real model: docs/guide/models.md)[/]"
    notes.print(note, highlight=False)


@app.command()
def worker() -> None:
    """Execute queued agent runs without serving the API (scale-out beside `serve --no-worker`)."""
    from atrium import operations
    from atrium.observability.logs import configure_logging

    configure_logging(_settings())
    settings = _open_database()
    console.print(f"Worker started: up to {settings.worker_concurrency} runs at once.")
    operations.work(settings)


@app.command()
def migrate() -> None:
    """Apply database migrations up to the newest revision."""
    _, upgraded = _migrate_database()
    console.print(_upgrade_summary(upgraded), highlight=False)


def _upgrade_summary(upgraded: Upgraded) -> str:
    applied = upgraded.applied
    if not applied:
        return f"Database is up to date at {upgraded.current}."
    if len(applied) == 1:
        return f"Applied 1 migration ({applied[0]})."
    return f"Applied {len(applied)} migrations ({applied[0]} → {applied[-1]})."


@keys_app.command("create")
def keys_create(
    account: Annotated[
        str, typer.Option(metavar="NAME", help="Account name; created if new.")
    ] = "default",
    tier: Annotated[str, typer.Option(metavar="TIER", help="standard or premium.")] = "standard",
    as_json: JsonOption = False,
) -> None:
    """Create an API key and print it (it is never shown again)."""
    from atrium import operations
    from atrium.errors import InvalidParameter

    settings = _open_database()
    try:
        issued = operations.create_key(settings, account=account, tier=tier)
    except InvalidParameter as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(2) from exc
    if as_json:
        print_json(
            {
                "key_id": issued.key_id,
                "account": issued.account_name,
                "tier": issued.tier,
                "key": issued.key,
            }
        )
        return
    # stdout is the key alone, so `KEY=$(atrium keys create …)` captures just the key.
    notes.print(f"Key {issued.key_id} for account '{issued.account_name}' ({issued.tier}):")
    print(issued.key)


@keys_app.command("list")
def keys_list(as_json: JsonOption = False) -> None:
    """List keys: id, account, tier, prefix, created, revoked."""
    from atrium import operations

    settings = _open_database()
    keys = operations.list_keys(settings)
    if as_json:
        print_list(keys)
    else:
        console.print(operations.keys_table(keys))


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[int, typer.Argument(help="Id from `atrium keys list`.")],
    as_json: JsonOption = False,
) -> None:
    """Revoke a key: every later request with it is a 401."""
    from atrium import operations
    from atrium.errors import NotFound

    settings = _open_database()
    try:
        operations.revoke_key(settings, key_id)
    except NotFound as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(1) from exc
    if as_json:
        print_json({"key_id": key_id, "revoked": True})
    else:
        console.print(f"Key {key_id} revoked.")
