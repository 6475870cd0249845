"""The `atrium` command: serve, migrate, keys."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Annotated

import typer
import uvicorn
from rich.console import Console
from rich.table import Table

from atrium.auth import repository as auth_repository
from atrium.auth import service as auth_service
from atrium.client.cli import register as register_client_commands
from atrium.db.engine import Database
from atrium.db.migrate import upgrade
from atrium.errors import InvalidParameter, NotFound
from atrium.settings import Settings, get_settings

app = typer.Typer(
    help="atrium: self-hosted domains, spaces, agents and durable agent runs.", no_args_is_help=True
)
keys_app = typer.Typer(help="Manage API keys.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")
register_client_commands(app)
console = Console()


def _ensure_sqlite_dir(settings: Settings) -> None:
    from pathlib import Path

    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        Path(str(url.database)).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)


def _configure_logging(settings: Settings) -> None:
    """atrium's own log lines on stderr: uvicorn configures only its loggers, and without a
    handler Python prints only warnings (the webhook sender's attempts are INFO)."""
    logger = logging.getLogger("atrium")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(settings.log_level.upper())


def _tune_gc() -> None:
    """Fewer, cheaper garbage collections in the long-running processes.

    Measured with `bench/runs_bench.py` (1,000 streams): CPython's default thresholds
    (700, 10, 10) made 1,700 collections in the streams phase, 1.4 s of the server's CPU, and
    full collections of the ~230 MB heap stopped the event loop for 110-225 ms each: they were
    the whole tail of the event lag (p99 230-307 ms; 107 ms with this). Freezing moves what
    start-up allocated (modules, models, the app) out of every later collection; the higher
    first threshold collects young objects every 50,000 net allocations instead of 700.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)


def _migrate(settings: Settings) -> None:
    _ensure_sqlite_dir(settings)
    upgrade(settings)


async def _bootstrap(settings: Settings) -> auth_service.IssuedKey | None:
    db = Database(settings)
    try:
        async with db.transaction() as session:
            return await auth_service.bootstrap(session, key=settings.bootstrap_key)
    finally:
        await db.dispose()


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to bind.")] = 8000,
    no_worker: Annotated[bool, typer.Option("--no-worker", help="Serve the API only.")] = False,
) -> None:
    """Apply migrations, create the first key on an empty database, and serve the API."""
    settings = get_settings()
    _configure_logging(settings)
    _migrate(settings)
    issued = asyncio.run(_bootstrap(settings))
    if issued is not None:
        console.print(
            f"[bold green]Created account 'default'.[/] API key (shown once):\n{issued.key}",
            soft_wrap=True,
        )
    if no_worker:
        console.print("Serving the API only (--no-worker).")
        settings = settings.model_copy(update={"run_worker": False})
    from atrium.app import create_app  # the app's imports are not needed by other commands

    application = create_app(settings)
    _tune_gc()
    uvicorn.run(
        application,
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        proxy_headers=True,
    )


@app.command()
def worker() -> None:
    """Execute queued agent runs without serving the API (scale-out beside `serve --no-worker`)."""
    settings = get_settings()
    _configure_logging(settings)
    _migrate(settings)
    from atrium.worker.process import run_worker_process

    console.print(f"Worker started: up to {settings.worker_concurrency} runs at once.")
    _tune_gc()
    asyncio.run(run_worker_process(settings))


@app.command()
def migrate() -> None:
    """Apply database migrations up to the newest revision."""
    _migrate(get_settings())
    console.print("Database is up to date.")


@keys_app.command("create")
def keys_create(
    account: Annotated[str, typer.Option(help="Account name; created if new.")] = "default",
    tier: Annotated[str, typer.Option(help="standard or premium.")] = "standard",
) -> None:
    """Create an API key and print it (it is never shown again)."""
    settings = get_settings()
    _migrate(settings)

    async def run() -> auth_service.IssuedKey:
        db = Database(settings)
        try:
            async with db.transaction() as session:
                return await auth_service.create_key(session, account_name=account, tier=tier)
        finally:
            await db.dispose()

    try:
        issued = asyncio.run(run())
    except InvalidParameter as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(2) from exc
    console.print(f"Key {issued.key_id} for account '{issued.account_name}' ({issued.tier}):")
    print(issued.key)


@keys_app.command("list")
def keys_list() -> None:
    """List keys: id, account, tier, prefix, created, revoked."""
    settings = get_settings()
    _migrate(settings)

    async def run() -> Table:
        db = Database(settings)
        try:
            async with db.session(write=False) as session:
                rows = await auth_repository.list_keys(session)
        finally:
            await db.dispose()
        table = Table("id", "account", "tier", "prefix", "created", "revoked")
        for key, acct in rows:
            table.add_row(
                str(key.id),
                acct.name,
                key.tier,
                key.prefix + "…",
                key.created_at.isoformat(timespec="seconds"),
                key.revoked_at.isoformat(timespec="seconds") if key.revoked_at else "",
            )
        return table

    console.print(asyncio.run(run()))


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[int, typer.Argument(help="Id from `atrium keys list`.")]) -> None:
    """Revoke a key: every later request with it is a 401."""
    settings = get_settings()

    async def run() -> None:
        db = Database(settings)
        try:
            async with db.transaction() as session:
                await auth_service.revoke_key(session, key_id=key_id)
        finally:
            await db.dispose()

    try:
        asyncio.run(run())
    except NotFound as exc:
        console.print(f"[red]{exc.message}[/]")
        raise typer.Exit(1) from exc
    console.print(f"Key {key_id} revoked.")
