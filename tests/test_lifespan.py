"""An app's lifespan: one at a time per app, and an app that stopped can start again.

A second lifespan of a running app would start a second write batcher and claim loop over the
same parts; the first set would be orphaned, never stopped, and keep claiming after shutdown.
"""

from __future__ import annotations

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from redis.exceptions import ConnectionError as RedisConnectionError

from atrium.app import create_app
from atrium.auth.service import create_key
from atrium.db.engine import Database
from atrium.settings import Settings
from tests.conftest import bearer
from tests.runs.helpers import create_run, wait_finished


async def _runs_complete(app: FastAPI, auth: dict[str, str]) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        run = await create_run(client, auth, "still here?")
        finished = await wait_finished(client, auth, run["run_id"])
        assert finished["status"] == "completed"


async def test_a_second_lifespan_of_a_running_app_is_refused(
    app: FastAPI, auth: dict[str, str]
) -> None:
    with pytest.raises(RuntimeError, match="already running"):
        async with LifespanManager(app):
            pass
    # The refused start touched nothing: the running app still executes runs.
    await _runs_complete(app, auth)


async def test_a_stopped_app_starts_again_and_executes_runs(settings: Settings) -> None:
    db = Database(settings)
    async with db.transaction() as session:
        issued = await create_key(session, account_name="restarts")
    await db.dispose()
    app = create_app(settings)
    for _ in range(2):
        async with LifespanManager(app):
            await _runs_complete(app, bearer(issued.key))


async def test_a_failed_start_reports_its_own_error_and_can_be_retried(settings: Settings) -> None:
    # Nothing listens on port 1: the broker's start fails after the database handle exists.
    app = create_app(settings.model_copy(update={"redis_url": "redis://127.0.0.1:1/0"}))
    for _ in range(2):  # the failed start left the app startable (and failing the same way)
        with pytest.raises(RedisConnectionError):
            async with LifespanManager(app):
                pass
