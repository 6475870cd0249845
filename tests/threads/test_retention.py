"""Retention (`ATRIUM_RETENTION_DAYS`): a finished thread older than the cutoff goes whole, a
thread with a run finished after it or still unfinished stays, and `/metrics` counts the rows.

The clock is the retention's own (`Retention.now`), set so the cutoff falls between two runs'
times as the API reported them."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI

from atrium.db.engine import Database
from atrium.threads.retention import Retention
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, wait_status
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.threads.helpers import THREADS, create_thread
from tests.threads.test_delete import _leftovers

RETENTION = {"retention_days": 1.0, "retention_interval_seconds": 3600.0}


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


async def _finished_thread(
    client: httpx.AsyncClient, auth: dict[str, str], prompt: str
) -> dict[str, object]:
    run = await create_run(client, auth, prompt)
    return await wait_finished(client, auth, run["run_id"])


@pytest.mark.fresh_app  # its metrics count from zero
@pytest.mark.parametrize("settings_overrides", [RETENTION], ids=["retention"])
async def test_old_finished_threads_go_and_the_rest_stay(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    make_agent: AgentFactory,
) -> None:
    empty = (await create_thread(client, auth))["id"]
    old = await _finished_thread(client, auth, "old-marker-31f2 please")
    # A thread whose run waits for its caller: unfinished, so kept however old.
    waiting = await create_run(
        client, auth, 'call lookup {"word": "x"}', agent_id=await make_agent(tools=[LOOKUP])
    )
    await wait_status(client, auth, waiting["run_id"], "requires_action")
    young = await _finished_thread(client, auth, "young one")

    retention: Retention = app.state.retention
    # The cutoff halfway between the old run's end and the young run's start.
    old_end, young_start = _at(str(old["finished_at"])), _at(str(young["created_at"]))
    assert old_end < young_start
    cutoff = old_end + (young_start - old_end) / 2
    retention.now = lambda: cutoff + timedelta(days=1)
    removed = await retention.purge()

    assert removed["threads"] == 2  # the empty thread and the old one
    assert removed["runs"] == 1
    assert removed["run_events"] >= 4  # queued, started, at least one delta, completed
    for gone in (empty, old["thread_id"]):
        assert (await client.get(f"{THREADS}/{gone}", headers=auth)).status_code == 404
    assert (await client.get(f"{RUNS}/{old['run_id']}", headers=auth)).status_code == 404
    assert await _leftovers(db, {"old-marker-31f2", str(old["run_id"]), empty}) == []
    for kept in (waiting["thread_id"], young["thread_id"]):
        assert (await client.get(f"{THREADS}/{kept}", headers=auth)).status_code == 200

    metrics = (await client.get("/metrics")).text
    assert 'atrium_retention_deleted_rows_total{table="threads"} 2.0' in metrics
    assert 'atrium_retention_deleted_rows_total{table="runs"} 1.0' in metrics

    # A second round finds nothing more; a later clock takes the young thread, not the waiting.
    assert await retention.purge() == {}
    retention.now = lambda: _at(str(young["finished_at"])) + timedelta(days=1, seconds=1)
    assert (await retention.purge())["threads"] == 1
    assert (await client.get(f"{THREADS}/{young['thread_id']}", headers=auth)).status_code == 404
    assert (await client.get(f"{THREADS}/{waiting['thread_id']}", headers=auth)).status_code == 200


async def test_retention_is_off_by_default(app: FastAPI) -> None:
    assert app.state.retention is None
