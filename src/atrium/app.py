"""`create_app()`: one ASGI application serving every API group of atrium."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fastapi import FastAPI

from atrium import __version__
from atrium.accounts.endpoints import router as account_router
from atrium.agents.endpoints import router as agents_router
from atrium.agents.model_check import ModelCheck
from atrium.agents.versions.endpoints import router as agent_versions_router
from atrium.analytics.endpoints import router as analytics_router
from atrium.dashboard import mount as mount_dashboard
from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.redis_client import connect_redis
from atrium.domains.endpoints import router as domains_router
from atrium.evals.endpoints import router as evals_router
from atrium.files.endpoints import router as files_router
from atrium.files.orphans import FileSweep
from atrium.http import docs, error_handlers, openapi
from atrium.http.context import RequestContextMiddleware
from atrium.http.gateway import GatewayMiddleware
from atrium.http.groups import AGENTS, DOMAINS, RUNS
from atrium.http.health import router as health_router
from atrium.memory.embedders import close_process_embedder
from atrium.memory.endpoints import router as memory_router
from atrium.memory.expiry import MemoryPurge
from atrium.observability.logs import install_log_escaping
from atrium.observability.metrics import Metrics
from atrium.outbound.resolver import Resolver
from atrium.providers.endpoints import router as providers_router
from atrium.ratelimit.limiter import RateLimiter
from atrium.runs.api.endpoints import router as runs_router
from atrium.runs.events import event_store
from atrium.runs.events.broker import Broker, RedisBroker
from atrium.schedules.endpoints import router as schedules_router
from atrium.serving import ServedDomainsMiddleware
from atrium.settings import Settings, get_settings
from atrium.spaces.endpoints import router as spaces_router
from atrium.threads.endpoints import router as threads_router
from atrium.threads.retention import Retention
from atrium.traces.endpoints import router as traces_router
from atrium.webhooks.endpoints import router as webhooks_router

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from atrium.worker.pool import WorkerPool


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application. Migrations are applied by the CLI before serving, not here."""
    settings = settings or get_settings()
    logging.getLogger("atrium").setLevel(settings.log_level.upper())
    install_log_escaping()  # outside input in a log line: escaped, never raw control bytes
    parts = _Parts.of(settings)
    app = FastAPI(
        title="atrium",
        version=__version__,
        summary="Domains and spaces, durable LLM agent runs, agents and usage analytics.",
        lifespan=_lifespan(parts, settings),
        # FastAPI's pages load their scripts from CDNs; atrium serves /docs itself (http/docs.py).
        docs_url=None,
        redoc_url=None,
    )
    _keep_on_state(app, settings, parts)
    error_handlers.install(app)
    openapi.install(app, amendments=[app.state.model_check.document])
    docs.install(app)
    _include_routers(app)
    mount_dashboard(app)
    _add_middleware(app, settings, parts)
    return app


@dataclass(frozen=True, slots=True)
class _Parts:
    """The process's long-lived parts: built with the app, started and stopped by its lifespan."""

    db: Database
    redis: Redis | None
    limiter: RateLimiter
    metrics: Metrics
    broker: Broker
    writer: WriteBatcher
    workers: WorkerPool | None
    # Deletes expired threads when `retention_days` is set (every API process: see the module).
    retention: Retention | None
    # Deletes stored file bytes no row names, when files live on disk or in a bucket.
    file_sweep: FileSweep | None
    # Deletes expired memory items (reads already leave them out).
    memory_purge: MemoryPurge

    @classmethod
    def of(cls, settings: Settings) -> _Parts:
        db = Database(settings)
        # One Redis pool per process (rate-limit counters, event fan-out); None when embedded.
        redis = (
            connect_redis(settings.redis_url, settings.redis_max_connections)
            if settings.redis_url
            else None
        )
        limiter = RateLimiter(settings, redis)
        metrics = Metrics()
        # Run events and worker wake-ups: in-process, or across processes through Redis.
        # An API-only process (no workers) needs no wake-ups or cancel requests from others.
        broker = (
            RedisBroker(redis, prefix=settings.redis_prefix, control=settings.run_worker)
            if redis is not None
            else Broker()
        )
        # Group commit of the hot writes (run creation, the worker's claims, events and finishes).
        writer = WriteBatcher(db, around_batch=event_store.batched)
        workers: WorkerPool | None = None
        if settings.run_worker:
            # The worker brings pydantic-ai (1 s of imports): an API-only process never loads it.
            from atrium.worker.pool import WorkerPool

            workers = WorkerPool(settings=settings, db=db, broker=broker, batcher=writer)
        retention = Retention(settings, db, metrics) if settings.retention_days > 0 else None
        file_sweep = FileSweep(settings, db) if settings.file_storage != "database" else None
        return cls(
            db=db,
            redis=redis,
            limiter=limiter,
            metrics=metrics,
            broker=broker,
            writer=writer,
            workers=workers,
            retention=retention,
            file_sweep=file_sweep,
            memory_purge=MemoryPurge(settings, db),
        )


def _lifespan(
    parts: _Parts, settings: Settings
) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Start the parts in order and stop them in reverse, one lifespan at a time."""
    running = False

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        nonlocal running
        # The app's parts (batcher, worker pool, broker) are one set: a second lifespan of the
        # same app while the first runs would start a second claim loop that nothing stops.
        if running:
            raise RuntimeError("this app is already running; create another with create_app()")
        running = True
        try:
            # Each part stops only if it started, in the reverse order (so a start-up that
            # failed half-way stops what it started and reports its own error).
            async with AsyncExitStack() as started:
                started.push_async_callback(parts.db.dispose)
                # After the worker pool: its runs may embed until they stop.
                started.push_async_callback(close_process_embedder, settings)
                if parts.redis is not None:
                    started.push_async_callback(parts.redis.aclose)
                await parts.broker.start()
                started.push_async_callback(parts.broker.stop)
                parts.writer.start()
                started.push_async_callback(parts.writer.stop)
                if parts.workers is not None:
                    await parts.workers.start()
                    started.push_async_callback(parts.workers.stop)
                if parts.retention is not None:
                    parts.retention.start()
                    started.push_async_callback(parts.retention.stop)
                if parts.file_sweep is not None:
                    parts.file_sweep.start()
                    started.push_async_callback(parts.file_sweep.stop)
                parts.memory_purge.start()
                started.push_async_callback(parts.memory_purge.stop)
                yield
        finally:
            running = False

    return lifespan


def _keep_on_state(app: FastAPI, settings: Settings, parts: _Parts) -> None:
    """What the dependencies and endpoints find on `request.app.state`."""
    state = app.state
    state.settings = settings
    state.db = parts.db
    state.limiter = parts.limiter
    state.redis = parts.redis
    state.metrics = parts.metrics
    state.broker = parts.broker
    state.writer = parts.writer
    state.workers = parts.workers
    state.retention = parts.retention
    state.file_sweep = parts.file_sweep
    state.memory_purge = parts.memory_purge
    state.resolver = Resolver.from_settings(settings)  # domain verification's DNS
    # Models registered on the worker's registry (tests, embedding apps) are usable models too.
    workers = parts.workers
    state.model_check = ModelCheck(
        settings, registered=workers.runtime.models.is_registered if workers else lambda _: False
    )
    if parts.redis is not None:
        state.redis_ping = parts.redis.ping


def _include_routers(app: FastAPI) -> None:
    """Every group's routes, in order of traffic.

    A request is matched against the groups in this order, each route's pattern in turn
    (60-75 µs of CPU to reach the last group, 6 µs the first): the runs, which clients poll
    and stream, come first, then the domain and space CRUD, then the agent definitions and
    the rest, written and read far less often. No two groups share a path, so the order
    changes nothing else (but the order of the OpenAPI document's paths;
    docs/decisions/0030-routers-in-order-of-traffic.md)."""
    app.include_router(health_router)
    app.include_router(runs_router, prefix=RUNS.prefix)
    app.include_router(threads_router, prefix=RUNS.prefix)
    app.include_router(files_router, prefix=RUNS.prefix)
    app.include_router(traces_router, prefix=RUNS.prefix)
    app.include_router(domains_router, prefix=DOMAINS.prefix)
    app.include_router(spaces_router, prefix=DOMAINS.prefix)
    app.include_router(account_router, prefix=AGENTS.prefix)
    app.include_router(agents_router, prefix=AGENTS.prefix)
    app.include_router(agent_versions_router, prefix=AGENTS.prefix)
    app.include_router(analytics_router, prefix=AGENTS.prefix)
    app.include_router(webhooks_router, prefix=AGENTS.prefix)
    app.include_router(providers_router, prefix=AGENTS.prefix)
    app.include_router(schedules_router, prefix=AGENTS.prefix)
    app.include_router(memory_router, prefix=AGENTS.prefix)
    app.include_router(evals_router, prefix=AGENTS.prefix)


def _add_middleware(app: FastAPI, settings: Settings, parts: _Parts) -> None:
    """Added last = runs first: the context wraps everything, the gateway guards the groups."""
    app.add_middleware(
        GatewayMiddleware,
        db=parts.db,
        limiter=parts.limiter,
        max_body_bytes=settings.max_body_bytes,
        upload_paths=frozenset({f"{RUNS.prefix}/files"}),
    )
    # Served domains answer before the gateway: a domain's visitors carry no API key.
    app.add_middleware(
        ServedDomainsMiddleware,
        db=parts.db,
        public_url=settings.public_url,
        status=settings.domain_redirect_status,
    )
    app.add_middleware(RequestContextMiddleware, metrics=parts.metrics, routes=app.routes)
