"""What the server-side commands (`serve`, `worker`, `migrate`, `keys`) do.

Kept out of `atrium.cli` so that the client commands (`atrium run`, `atrium agents`, ...) start
without importing the server: SQLAlchemy, Alembic, FastAPI, uvicorn and pydantic-ai are most of
a process's start-up, and a client command needs none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from typing import TypeVar

import sniffio
import uvicorn
from rich.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.auth import repository as auth_repository
from atrium.auth import service as auth_service
from atrium.db.engine import Database
from atrium.db.files import sqlite_file
from atrium.db.migrate import Upgraded, upgrade
from atrium.kit.malloc_trim import start_malloc_trim
from atrium.observability.logs import install_log_escaping
from atrium.settings import Settings

T = TypeVar("T")


def configure_logging(settings: Settings) -> None:
    """atrium's own log lines on stderr: uvicorn configures only its loggers, and without a
    handler Python prints only warnings (the webhook sender's attempts are INFO)."""
    logger = logging.getLogger("atrium")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(settings.log_level.upper())
    install_log_escaping()


# Young objects are collected every YOUNG_COLLECTION net allocations of tracked objects, the
# middle generation every MIDDLE_COLLECTIONS young collections, the old one every
# OLD_COLLECTIONS middle collections (when enough objects have reached it since the last).
YOUNG_COLLECTION = 10_000
MIDDLE_COLLECTIONS = 20
OLD_COLLECTIONS = 2


def tune_gc() -> None:
    """Fewer, cheaper garbage collections in the long-running processes, in bounded piles.

    With CPython's default thresholds (700, 10, 10), full collections of a server's ~230 MB
    heap stop the event loop for 110-225 ms each: the whole tail of the event lag under a
    thousand streams. Freezing moves what start-up allocated (modules, models, the app) out of
    every later collection.

    The young generation is collected every 10,000 net allocations, the middle one every 20 of
    those. A request leaves cyclic garbage, which waits for the collection of its generation:
    collected too rarely, the pile swings by megabytes, each swing reaches memory the one
    before had not, and the RSS of a server under steady load rises for hours; 10,000 keeps the
    swing near 1 MB (`tests/test_gc_tuning.py` bounds it) and costs the collector less CPU in a
    burst of runs than 5,000.

    Garbage that was still in use at a middle collection (a request, a run in flight) reaches
    the old generation and waits for a full collection. CPython makes one only when the
    objects that reached it since the last outnumber a quarter of those the last one left, a
    count it does not reset on `gc.freeze()`: with start-up's ~200,000 objects counted there,
    no full collection would come for hours and that garbage would grow all along. The
    collection right after the freeze finds the old generation empty and so counts
    only what the server itself keeps; the old generation (~40,000 objects, the frozen ones
    left out) is then collected when the quarter rule allows, at most every third middle
    collection, a few milliseconds each (docs/decisions/0011-garbage-collector-thresholds.md).
    """
    gc.freeze()
    gc.collect()
    gc.set_threshold(YOUNG_COLLECTION, MIDDLE_COLLECTIONS, OLD_COLLECTIONS)


@contextlib.contextmanager
def asyncio_thread() -> Iterator[None]:
    """Tell sniffio that this thread runs an asyncio event loop, while the block runs it.

    anyio asks sniffio which library runs for every cancel scope, lock, event and task group it
    makes (pydantic-ai's stream layers and httpx2's pool make ~230 a streamed run), and sniffio
    finds asyncio by calling `asyncio.current_task()`, a Python function on 3.11. Its
    thread-local name is the answer it gives first, for a thread that runs one loop and nothing
    else, as the server's main thread does while uvicorn or the worker runs
    (0.45 µs less per lookup, measured). Cleared after: `anyio.run` refuses to start in a thread
    sniffio says is running a loop already.
    """
    previous = sniffio.thread_local.name
    sniffio.thread_local.name = "asyncio"
    try:
        yield
    finally:
        sniffio.thread_local.name = previous


def database_location(settings: Settings) -> str:
    """Where this command's data lives, for the line every server-side command prints: the
    SQLite file's absolute path, or the URL without its password."""
    path = sqlite_file(settings.database_url)
    if path is not None:
        return str(path)
    return make_url(settings.database_url).render_as_string(hide_password=True)


def migrate(settings: Settings) -> Upgraded:
    """Apply migrations, creating a SQLite file and its folder first (private: `db.files`)."""
    upgraded = upgrade(settings)
    _warn_if_secrets_in_clear(settings)
    return upgraded


def _warn_if_secrets_in_clear(settings: Settings) -> None:
    """A PostgreSQL deployment without `ATRIUM_SECRETS_KEY` stores webhook signing secrets in
    clear (`webhooks.signing.sealed`): said at every start until the key is set."""
    if (
        settings.secrets_key is None
        and make_url(settings.database_url).get_backend_name() != "sqlite"
    ):
        logging.getLogger("atrium").warning(
            "ATRIUM_SECRETS_KEY is not set: webhook signing secrets are stored in clear in the "
            "database (docs/guide/deploy.md#secrets-at-rest)"
        )


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
