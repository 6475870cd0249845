"""`create_app()`: one ASGI application serving every API group of atrium."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from redis.asyncio import Redis

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
    # One Redis pool per process (rate-limit counters, event fan-out); None when embedded.
    redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
    limiter = RateLimiter(settings, redis)
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await db.dispose()
            if redis is not None:
                await redis.aclose()

    app = FastAPI(
        title="atrium",
        version=__version__,
        summary="Domains and spaces, durable LLM agent runs, agents and usage analytics.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.limiter = limiter
    app.state.redis = redis
    app.state.metrics = metrics
    if redis is not None:
        app.state.redis_ping = redis.ping

    error_handlers.install(app)
    app.include_router(health_router)
    app.include_router(account_router, prefix=AGENTS.prefix)

    # Added last = runs first: the context wraps everything, the gateway guards the groups.
    app.add_middleware(
        GatewayMiddleware, db=db, limiter=limiter, max_body_bytes=settings.max_body_bytes
    )
    app.add_middleware(RequestContextMiddleware, metrics=metrics)
    return app
