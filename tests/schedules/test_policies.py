"""Missed fire times after a simulated 3-hour outage (`on_missed`), a previous run still going
(`on_overlap`), the daily credit cap, webhooks of firings, and racing looks of one process."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import datetime, timedelta

import httpx
import pytest
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, wait_finished
from tests.schedules.conftest import Clock, Tick
from tests.schedules.helpers import SCHEDULES, create, firings, runs_of

T0 = datetime.fromisoformat("2026-01-05T08:00:00+00:00")


async def _outage(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    *,
    cron: str = "*/15 * * * *",
    **body: object,
) -> tuple[str, list[dict[str, object]]]:
    """A schedule created at T0, then no process fires for 3 hours; the first look after."""
    clock.set(T0)
    made = await create(client, auth, cron=cron, **body)
    await tick(T0 + timedelta(hours=3, minutes=5))
    return made["schedule_id"], await firings(client, auth, made["schedule_id"])


async def test_missed_skip_records_each_as_skipped(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    schedule_id, found = await _outage(client, auth, clock, tick, on_missed="skip")
    assert len(found) == 12  # 08:15 .. 11:00
    assert {(each["status"], each["reason"]) for each in found} == {("skipped", "missed")}
    assert await runs_of(client, auth, schedule_id) == []
    schedule = (await client.get(f"{SCHEDULES}/{schedule_id}", headers=auth)).json()
    assert schedule["next_fire_at"] == "2026-01-05T11:15:00.000000Z"


async def test_missed_run_once_runs_the_latest(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    schedule_id, found = await _outage(client, auth, clock, tick, on_missed="run_once")
    assert [each["status"] for each in found] == ["skipped"] * 11 + ["fired"]
    assert found[-1]["fire_at"] == "2026-01-05T11:00:00.000000Z"
    runs = await runs_of(client, auth, schedule_id)
    assert [run["run_id"] for run in runs] == [found[-1]["run_id"]]


async def test_missed_run_all_runs_each(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    schedule_id, found = await _outage(
        client, auth, clock, tick, on_missed="run_all", on_overlap="enqueue"
    )
    assert [each["status"] for each in found] == ["fired"] * 12
    runs = await runs_of(client, auth, schedule_id)
    assert sorted(run["run_id"] for run in runs) == sorted(each["run_id"] for each in found)


async def test_missed_run_all_is_bounded(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    """Every minute for 3 hours (08:01 to 11:05, the look at 11:05): the latest
    ATRIUM_SCHEDULE_CATCH_UP_LIMIT (24) missed ones run, and the two on time (11:04, 11:05,
    within the 60 s grace); of the earlier ones the latest 74 are listed as skipped, the 85
    before them summed up in one record."""
    schedule_id, found = await _outage(
        client, auth, clock, tick, cron="* * * * *", on_missed="run_all", on_overlap="enqueue"
    )
    statuses = Counter((each["status"], each["reason"]) for each in found)
    assert statuses == {("fired", None): 26, ("skipped", "catch_up_limit"): 75}
    assert "85 or more fire times" in found[0]["detail"]
    assert all(each["status"] == "fired" for each in found[-26:])
    assert len(await runs_of(client, auth, schedule_id)) == 26


async def test_missed_run_all_then_overlap_skip(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    """run_all with on_overlap skip: the first catch-up run is still queued at the next fire
    time, so the others skip as overlapping."""
    _schedule_id, found = await _outage(client, auth, clock, tick, on_missed="run_all")
    assert found[0]["status"] == "fired"
    assert {each["reason"] for each in found[1:]} == {"overlap"}


async def test_a_very_long_outage_is_summed_up(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    """Every minute, down for 30 days: one look, a bounded record (a summary row for the
    earliest), one run."""
    clock.set(T0)
    made = await create(client, auth, cron="* * * * *", on_missed="run_once")
    await tick(T0 + timedelta(days=30))
    found = await firings(client, auth, made["schedule_id"])
    assert len(found) <= 102
    assert found[0]["reason"] == "missed" and "not listed" in found[0]["detail"]
    assert [each["status"] for each in found].count("fired") == 1


async def _stalling_agent(make_agent: AgentFactory, models: ModelRegistry) -> str:
    async def stalls(_messages: object, _info: AgentInfo):  # type: ignore[no-untyped-def]
        yield "Half"
        await asyncio.sleep(60)
        yield " never"

    models.register("test:schedule-stalls", FunctionModel(stream_function=stalls))
    return await make_agent(model="test:schedule-stalls", tools=[])


async def _two_fire_times(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    agent_id: str,
    **body: object,
) -> tuple[str, list[dict[str, object]]]:
    clock.set(T0)
    made = await create(client, auth, cron="*/15 * * * *", agent_id=agent_id, **body)
    await tick(T0 + timedelta(minutes=15, seconds=1))
    first = (await firings(client, auth, made["schedule_id"]))[0]
    await _wait_status(client, auth, str(first["run_id"]), "running")
    await tick(T0 + timedelta(minutes=30, seconds=1))
    return made["schedule_id"], await firings(client, auth, made["schedule_id"])


async def _wait_status(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, status: str
) -> dict[str, object]:
    for _ in range(1000):
        run: dict[str, object] = (await client.get(f"{RUNS}/{run_id}", headers=auth)).json()
        if run["status"] == status:
            return run
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} never {status}")


async def _cancel_all(client: httpx.AsyncClient, auth: dict[str, str], schedule_id: str) -> None:
    for run in await runs_of(client, auth, schedule_id):
        if run["status"] in ("queued", "running"):
            await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
        await wait_finished(client, auth, run["run_id"])


async def test_overlap_skip(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    agent_id = await _stalling_agent(make_agent, models)
    schedule_id, found = await _two_fire_times(
        client, auth, clock, tick, agent_id, on_overlap="skip"
    )
    assert [each["status"] for each in found] == ["fired", "skipped"]
    assert found[1]["reason"] == "overlap" and found[0]["run_id"] in str(found[1]["detail"])
    await _cancel_all(client, auth, schedule_id)


async def test_overlap_enqueue_on_one_thread_waits(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    agent_id = await _stalling_agent(make_agent, models)
    made_thread = await client.post("/api/v1/public/threads", json={}, headers=auth)
    assert made_thread.status_code == 201, made_thread.text
    thread = made_thread.json()
    schedule_id, found = await _two_fire_times(
        client, auth, clock, tick, agent_id, on_overlap="enqueue", thread=thread["id"]
    )
    assert [each["status"] for each in found] == ["fired", "fired"]
    second = (await client.get(f"{RUNS}/{found[1]['run_id']}", headers=auth)).json()
    assert second["status"] == "queued"  # behind the first, on the same thread
    await _cancel_all(client, auth, schedule_id)


async def test_overlap_cancel_previous(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    agent_id = await _stalling_agent(make_agent, models)
    schedule_id, found = await _two_fire_times(
        client, auth, clock, tick, agent_id, on_overlap="cancel_previous"
    )
    assert [each["status"] for each in found] == ["fired", "fired"]
    first = await wait_finished(client, auth, str(found[0]["run_id"]))
    assert first["status"] == "cancelled" and first["cancel_reason"] == "superseded"
    await _cancel_all(client, auth, schedule_id)


async def test_daily_credit_cap_skips_until_the_next_day(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    clock.set(T0)
    made = await create(
        client,
        auth,
        cron="0 */6 * * *",
        timezone="America/New_York",
        max_credits_per_day=0.000001,
    )
    # 2026-01-05 in New York: 06:00 and 12:00 local (11:00Z, 17:00Z); the first spends credits.
    await tick("2026-01-05T11:00:01+00:00")
    first = (await firings(client, auth, made["schedule_id"]))[-1]
    run = await wait_finished(client, auth, str(first["run_id"]))
    assert run["billing"]["credits"] > 0.000001
    await tick("2026-01-05T17:00:01+00:00")
    capped = (await firings(client, auth, made["schedule_id"]))[-1]
    assert capped["status"] == "skipped" and capped["reason"] == "credit_cap"
    assert "2026-01-05 (America/New_York)" in str(capped["detail"])
    # A manual trigger follows the cap too.
    triggered = await client.post(f"{SCHEDULES}/{made['schedule_id']}/trigger", headers=auth)
    assert triggered.json()["reason"] == "credit_cap"
    # 2026-01-06 00:00 local is 05:00Z: a new day, it fires again.
    await tick("2026-01-06T05:00:01+00:00")
    again = (await firings(client, auth, made["schedule_id"]))[-1]
    assert again["status"] == "fired"
    await wait_finished(client, auth, str(again["run_id"]))


async def test_a_credit_cap_day_east_of_utc_starts_at_its_own_midnight(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    # Tokyo is 9 hours ahead: its 2026-01-06 runs from 2026-01-05T15:00Z, so its 06:00 fire
    # time (21:00Z) and 12:00 fire time (03:00Z the next UTC day) are one day. Bounds compared
    # in the zone's own digits (SQLite compares datetimes as text) lost the first one.
    clock.set(datetime.fromisoformat("2026-01-05T20:00:00+00:00"))
    made = await create(
        client, auth, cron="0 */6 * * *", timezone="Asia/Tokyo", max_credits_per_day=0.000001
    )
    await tick("2026-01-05T21:00:01+00:00")
    first = (await firings(client, auth, made["schedule_id"]))[-1]
    assert first["status"] == "fired"
    await wait_finished(client, auth, str(first["run_id"]))
    await tick("2026-01-06T03:00:01+00:00")
    capped = (await firings(client, auth, made["schedule_id"]))[-1]
    assert capped["status"] == "skipped" and capped["reason"] == "credit_cap", capped
    assert "2026-01-06 (Asia/Tokyo)" in str(capped["detail"])
    # 2026-01-07 00:00 in Tokyo is 15:00Z: a new day, it fires again.
    await tick("2026-01-06T15:00:01+00:00")
    assert (await firings(client, auth, made["schedule_id"]))[-1]["status"] == "fired"


async def test_firings_go_to_webhooks(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    hook = await client.post(
        "/v1/webhooks",
        json={
            "url": "https://hooks.atrium.test/in",  # a reserved name: never public
            "events": ["schedule.fired", "schedule.skipped"],
        },
        headers=auth,
    )
    assert hook.status_code == 201, hook.text
    _schedule_id, found = await _outage(client, auth, clock, tick, on_missed="run_once")
    deliveries = await client.get(
        f"/v1/webhooks/{hook.json()['webhook_id']}/deliveries", params={"limit": 100}, headers=auth
    )
    assert deliveries.status_code == 200, deliveries.text
    events = Counter(each["event"] for each in deliveries.json()["data"])
    assert events == {"schedule.skipped": 11, "schedule.fired": 1}
    fired = [each for each in deliveries.json()["data"] if each["event"] == "schedule.fired"]
    assert fired[0]["run_id"] == found[-1]["run_id"]
    skipped = [each for each in deliveries.json()["data"] if each["event"] == "schedule.skipped"]
    assert skipped[0]["run_id"] is None


@pytest.mark.parametrize("looks", [8])
async def test_racing_looks_fire_each_time_once(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick, looks: int
) -> None:
    """Looks of the loop racing on the same due schedules (and triggers beside them): each fire
    time is recorded once and queues one run."""
    clock.set(T0)
    made = [
        await create(client, auth, cron="*/5 * * * *", on_missed="run_all", on_overlap="enqueue")
        for _ in range(5)
    ]
    now = T0 + timedelta(hours=1, seconds=30)
    clock.set(now)
    await asyncio.gather(*(tick() for _ in range(looks)))
    for schedule in made:
        found = await firings(client, auth, schedule["schedule_id"])
        assert len(found) == 12
        assert len({each["fire_at"] for each in found}) == 12
        runs = await runs_of(client, auth, schedule["schedule_id"])
        assert sorted(run["run_id"] for run in runs) == sorted(each["run_id"] for each in found)
