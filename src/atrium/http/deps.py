"""`Annotated` dependency aliases shared by every endpoint."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.auth.service import Principal
from atrium.db.engine import Database
from atrium.errors import Unauthorized
from atrium.outbound.resolver import Resolver
from atrium.settings import Settings

_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


# The dependencies below are `async def` although they never await: FastAPI runs a plain `def`
# dependency in a worker thread (anyio's thread pool), a thread hop per dependency per request,
# which was a large share of a cheap request's CPU (an SSE stream open made five).


def _db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def get_db(request: Request) -> Database:
    return _db(request)


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One transaction per request, committed here when the endpoint returns without error.

    Declared with `scope="function"` below, so the commit happens before the response is sent:
    a client never sees a 201 for a write that then fails to commit.
    """
    db = _db(request)
    async with db.session(write=request.method not in _READ_METHODS) as session:
        try:
            yield session
            await session.commit()
        except BaseException:
            await session.rollback()
            raise


async def get_resolver(request: Request) -> Resolver:
    resolver: Resolver = request.app.state.resolver
    return resolver


async def get_principal(request: Request) -> Principal:
    principal: Principal | None = getattr(request.state, "principal", None)
    if principal is None:  # the gateway guards every group, so this is a wiring error
        raise Unauthorized("missing or invalid API key")
    return principal


DatabaseDep = Annotated[Database, Depends(get_db)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
CurrentPrincipal = Annotated[Principal, Depends(get_principal)]
ResolverDep = Annotated[Resolver, Depends(get_resolver)]
