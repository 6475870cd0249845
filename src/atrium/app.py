"""`create_app()`: one ASGI application serving every API group of atrium."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from atrium import __version__
from atrium.accounts.endpoints import router as account_router
from atrium.db.engine import Database
from atrium.http import error_handlers
from atrium.http.context import RequestContextMiddleware
from atrium.http.gateway import GatewayMiddleware
from atrium.http.groups import AGENTS
from atrium.http.health import router as health_router
from atrium.observability.metrics import Metrics
from atrium.ratelimit.limiter import RateLimiter
from atrium.settings import Settings, get_settings


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application. Migrations are applied by the CLI before serving, not here."""
    settings = settings or get_settings()
    logging.getLogger("atrium").setLevel(settings.log_level.upper())
    db = Database(settings)
    limiter = RateLimiter(settings)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await db.dispose()

    app = FastAPI(
        title="atrium",
        version=__version__,
        summary="Domains and spaces, durable LLM agent runs, agents and usage analytics.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.limiter = limiter
    app.state.metrics = metrics
    if settings.redis_url:
        app.state.redis_ping = _redis_ping(limiter)

    error_handlers.install(app)
    app.include_router(health_router)
    app.include_router(account_router, prefix=AGENTS.prefix)

    # Added last = runs first: the context wraps everything, the gateway guards the groups.
    app.add_middleware(
        GatewayMiddleware, db=db, limiter=limiter, max_body_bytes=settings.max_body_bytes
    )
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    return app


def _redis_ping(limiter: RateLimiter):  # type: ignore[no-untyped-def]
    async def ping() -> None:
        if not await limiter.storage.check():
            raise ConnectionError("redis did not answer")

    return ping
