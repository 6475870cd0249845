"""The `atrium` command: serve, worker, migrate, keys, and the client's commands.

The server-side commands import `atrium.operations` (and with it the server) when they run:
a client command such as `atrium run` then starts in a third of the time (docs/client.md).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from atrium.client.cli import register as register_client_commands
from atrium.settings import get_settings

app = typer.Typer(
    help="atrium: self-hosted domains, spaces, agents and durable agent runs.", no_args_is_help=True
)
keys_app = typer.Typer(help="Manage API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
register_client_commands(app)
console = Console()


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    no_worker: Annotated[bool, typer.Option("--no-worker", help="Serve the API only.")] = False,
) -> None:
    """Apply migrations, create the first key on an empty database, and serve the API."""
    from atrium import operations

    settings = get_settings()
    operations.configure_logging(settings)
    operations.migrate(settings)
    issued = operations.bootstrap(settings)
    if issued is not None:
        console.print(
            f"[bold green]Created account 'default'.[/] API key (shown once):\n{issued.key}",
            soft_wrap=True,
        )
    if no_worker:
        console.print("Serving the API only (--no-worker).")
        settings = settings.model_copy(update={"run_worker": False})
    operations.serve(settings, host=host, port=port)


@app.command()
def worker() -> None:
    """Execute queued agent runs without serving the API (scale-out beside `serve --no-worker`)."""
    from atrium import operations

    settings = get_settings()
    operations.configure_logging(settings)
    operations.migrate(settings)
    console.print(f"Worker started: up to {settings.worker_concurrency} runs at once.")
    operations.work(settings)


@app.command()
def migrate() -> None:
    """Apply database migrations up to the newest revision."""
    from atrium import operations

    operations.migrate(get_settings())
    console.print("Database is up to date.")


@keys_app.command("create")
def keys_create(
    account: Annotated[str, typer.Option(help="Account name; created if new.")] = "default",
    tier: Annotated[str, typer.Option(help="standard or premium.")] = "standard",
) -> None:
    """Create an API key and print it (it is never shown again)."""
    from atrium import operations
    from atrium.errors import InvalidParameter

    settings = get_settings()
    operations.migrate(settings)
    try:
        issued = operations.create_key(settings, account=account, tier=tier)
    except InvalidParameter as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(2) from exc
    console.print(f"Key {issued.key_id} for account '{issued.account_name}' ({issued.tier}):")
    print(issued.key)


@keys_app.command("list")
def keys_list() -> None:
    """List keys: id, account, tier, prefix, created, revoked."""
    from atrium import operations

    settings = get_settings()
    operations.migrate(settings)
    console.print(operations.keys_table(settings))


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[int, typer.Argument(help="Id from `atrium keys list`.")]) -> None:
    """Revoke a key: every later request with it is a 401."""
    from atrium import operations
    from atrium.errors import NotFound

    try:
        operations.revoke_key(get_settings(), key_id)
    except NotFound as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(1) from exc
    console.print(f"Key {key_id} revoked.")
