"""The client's `schedules` and `atrium schedules …` against a real server (offline model):
create, preview, trigger, firings, runs by schedule, pause, update, delete; --json as the
API's shapes; a 400 naming the option."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from atrium.client import AsyncClient, Client
from atrium.client.errors import InvalidParameterError, NotFoundError
from tests.client.conftest import Server


def test_client_schedules(atrium: Client) -> None:
    made = atrium.schedules.create(
        "Summarise the news", "0 7 * * MON-FRI", timezone="Europe/Berlin", on_missed="skip"
    )
    assert made.schedule_id.startswith("sch_") and made.thread == "new"
    preview = atrium.schedules.next(made.schedule_id, n=3)
    assert len(preview.data) == 3
    assert all(each.local_time.hour == 7 for each in preview.data)

    firing = atrium.schedules.trigger(made.schedule_id)
    assert firing.status == "fired" and firing.run_id is not None
    run = atrium.runs.wait(firing.run_id, timeout=60)
    assert run.status == "completed" and run.schedule_id == made.schedule_id
    assert [r.run_id for r in atrium.runs.list(schedule_id=made.schedule_id).data] == [run.run_id]
    assert [f.firing_id for f in atrium.schedules.iter_firings(made.schedule_id)] == [
        firing.firing_id
    ]
    usage = atrium.schedules.usage(made.schedule_id)
    assert usage.totals.runs == 1

    paused = atrium.schedules.pause(made.schedule_id)
    assert paused.paused and paused.next_fire_at is None
    updated = atrium.schedules.update(made.schedule_id, max_credits_per_day=3.0, paused=False)
    assert updated.max_credits_per_day == 3.0 and updated.next_fire_at is not None
    cleared = atrium.schedules.update(made.schedule_id, max_credits_per_day=None)
    assert cleared.max_credits_per_day is None
    assert [s.schedule_id for s in atrium.schedules.iter_all()] == [made.schedule_id]

    with pytest.raises(InvalidParameterError) as bad:
        atrium.schedules.create("Hi", "0 9 * *")
    assert bad.value.parameter == "cron"
    assert atrium.schedules.delete(made.schedule_id).deleted
    with pytest.raises(NotFoundError):
        atrium.schedules.get(made.schedule_id)


async def test_async_client_schedules(async_atrium: AsyncClient) -> None:
    made = await async_atrium.schedules.create("Hi", "*/10 * * * *", timezone="Asia/Tokyo")
    page = await async_atrium.schedules.list()
    assert [each.schedule_id for each in page.data] == [made.schedule_id]
    fired = await async_atrium.schedules.trigger(made.schedule_id)
    assert fired.trigger == "manual"


def test_cli_schedules(server: Server, api_key: str) -> None:
    user = replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})
    created = user.cli(
        "schedules", "create", "Report the weather", "--cron", "30 6 * * *",
        "--timezone", "America/New_York", "--on-overlap", "enqueue", "--json",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    schedule = json.loads(created.stdout)
    schedule_id = schedule["schedule_id"]
    assert schedule["on_overlap"] == "enqueue"

    listed = user.cli("schedules", "list")
    assert listed.returncode == 0 and schedule_id in listed.stdout

    preview = user.cli("schedules", "next", schedule_id, "-n", "2")
    assert preview.returncode == 0, preview.stderr
    assert "America/New_York" in preview.stdout and "06:30" in preview.stdout

    fired = user.cli("schedules", "trigger", schedule_id)
    assert fired.returncode == 0 and "Fired: run run_" in fired.stdout
    history = user.cli("schedules", "firings", schedule_id, "--json")
    (firing,) = json.loads(history.stdout)["data"]
    assert firing["status"] == "fired" and firing["trigger"] == "manual"

    bad = user.cli("schedules", "update", schedule_id, "--timezone", "Atlantis/Capital")
    assert bad.returncode == 1
    assert "parameter: --timezone" in bad.stderr

    paused = user.cli("schedules", "pause", schedule_id)
    assert paused.returncode == 0 and "paused" in paused.stdout
    deleted = user.cli("schedules", "delete", schedule_id)
    assert deleted.returncode == 0 and "deleted" in deleted.stdout
