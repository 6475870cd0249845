"""What the server-side commands (`serve`, `worker`, `keys`) do; `migrate` is `db.migrate`.

Kept out of `atrium.cli` so that the client commands (`atrium run`, `atrium agents`, ...) start
without importing the server: SQLAlchemy, Alembic, FastAPI, uvicorn and pydantic-ai are most of
a process's start-up, and a client command needs none of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TypeVar

import uvicorn
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.auth import repository as auth_repository
from atrium.auth import service as auth_service
from atrium.db.engine import Database
from atrium.process_tuning.asyncio_thread import asyncio_thread
from atrium.process_tuning.gc_thresholds import tune_gc
from atrium.process_tuning.malloc_trim import start_malloc_trim
from atrium.settings import Settings

T = TypeVar("T")


def _on_database(
    settings: Settings,
    operation: Callable[[AsyncSession], Awaitable[T]],
    *,
    write: bool = True,
) -> T:
    """Run `operation` in one transaction (or, `write=False`, a read session) on a database
    opened for this command alone."""

    async def run() -> T:
        db = Database(settings)
        try:
            if write:
                async with db.transaction() as session:
                    return await operation(session)
            async with db.session(write=False) as session:
                return await operation(session)
        finally:
            await db.dispose()

    return asyncio.run(run())


def bootstrap(settings: Settings) -> auth_service.IssuedKey | None:
    """The first key, on a database that has none (`ATRIUM_BOOTSTRAP_KEY` or a new one)."""
    return _on_database(settings, partial(auth_service.bootstrap, key=settings.bootstrap_key))


def serve(settings: Settings, *, host: str, port: int) -> None:
    from atrium.app import create_app
    from atrium.http.protocol import http_protocol

    application = create_app(settings)
    tune_gc()
    start_malloc_trim(settings.malloc_trim_seconds)
    with asyncio_thread():  # uvicorn runs its loop in this thread
        uvicorn.run(
            application,
            host=host,
            port=port,
            log_level=settings.log_level.lower(),
            proxy_headers=True,
            # Bounds the size and read time of request heads (ATRIUM_HTTP_MAX_HEADER_BYTES,
            # ATRIUM_HTTP_HEADER_TIMEOUT_SECONDS), which uvicorn leaves open.
            http=http_protocol(settings),
        )


def work(settings: Settings) -> None:
    from uvicorn.loops.auto import auto_loop_factory

    from atrium.worker.process import run_worker_process

    tune_gc()
    start_malloc_trim(settings.malloc_trim_seconds)
    # The event loop `serve` runs on (uvicorn's choice: uvloop where it is installed), not
    # asyncio's default: a worker's CPU is mostly callbacks, tasks and sockets of the loop
    # (pydantic-ai's stream layers, the model's HTTP stream), which uvloop runs in C.
    with asyncio_thread(), asyncio.Runner(loop_factory=auto_loop_factory()) as runner:
        runner.run(run_worker_process(settings))


def create_key(settings: Settings, *, account: str, tier: str) -> auth_service.IssuedKey:
    """Raises InvalidParameter for an unknown tier or a bad account name."""
    return _on_database(settings, partial(auth_service.create_key, account_name=account, tier=tier))


def list_keys(settings: Settings) -> list[dict[str, object]]:
    """Every key: id, account, tier, prefix, created, revoked (ISO 8601 or None)."""
    rows = _on_database(settings, auth_repository.list_keys, write=False)
    return [
        {
            "key_id": key.id,
            "account": acct.name,
            "tier": key.tier,
            "prefix": key.prefix,
            "created_at": key.created_at.isoformat(timespec="seconds"),
            "revoked_at": key.revoked_at.isoformat(timespec="seconds") if key.revoked_at else None,
        }
        for key, acct in rows
    ]


def keys_table(keys: list[dict[str, object]]) -> Table:
    """The keys of `list_keys` as a table."""
    table = Table("id", "account", "tier", "prefix", "created", "revoked")
    for key in keys:
        table.add_row(
            str(key["key_id"]),
            str(key["account"]),
            str(key["tier"]),
            f"{key['prefix']}…",
            str(key["created_at"]),
            str(key["revoked_at"] or ""),
        )
    return table


def revoke_key(settings: Settings, key_id: int) -> None:
    """Raises NotFound for an unknown key."""
    _on_database(settings, partial(auth_service.revoke_key, key_id=key_id))
