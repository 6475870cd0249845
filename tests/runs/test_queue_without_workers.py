"""With the worker pool off (`atrium serve --no-worker`), runs wait in the queue."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.runs.helpers import RUNS, create_run, read_stream


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"run_worker": False, "sse_poll_seconds": 0.05}


async def test_runs_stay_queued_and_cancel_at_once(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    await asyncio.sleep(0.1)
    assert (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()["status"] == "queued"

    stream = asyncio.create_task(read_stream(client, auth, run["run_id"]))
    await asyncio.sleep(0.1)
    assert not stream.done()  # a queued run's stream stays open

    response = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert response.status_code == 200
    cancelled = response.json()
    assert cancelled["status"] == "cancelled"
    assert cancelled["finished_at"] is not None
    assert cancelled["artifacts"] == []
    assert cancelled["billing"]["credits"] == 0
    frames = await asyncio.wait_for(stream, 5)
    assert [f["event"] for f in frames] == ["run.queued", "run.cancelled"]

    usage = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (usage["runs"], usage["cancelled"]) == (1, 1)
    listed = await client.get(RUNS, params={"status": "cancelled"}, headers=auth)
    assert [r["run_id"] for r in listed.json()["data"]] == [run["run_id"]]
