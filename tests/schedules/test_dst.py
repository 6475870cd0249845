"""Fire times across DST transitions in two zones, fired by the loop with the test's clock:
a fire time inside a spring-forward gap fires once as the clock jumps; a fixed-time job in a
fall-back repeat fires once, an hourly one in both hours."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import httpx
import pytest

from atrium.kit.time import isoformat
from tests.schedules.conftest import Clock, Tick
from tests.schedules.helpers import create, firings, runs_of


async def _fired_walking(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    tick: Tick,
    schedule_id: str,
    start: datetime,
    hours: int,
) -> list[str]:
    """Tick every 10 minutes for `hours` from `start`: the fire times that fired."""
    moment = start
    while moment <= start + timedelta(hours=hours):
        await tick(moment)
        moment += timedelta(minutes=10)
    found = await firings(client, auth, schedule_id)
    assert all(each["status"] == "fired" for each in found), found
    return [each["fire_at"] for each in found]


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    ("zone", "cron", "start", "expected"),
    [
        # Berlin springs forward at 02:00 CET to 03:00 CEST on 2026-03-29: 02:30 does not exist.
        (
            "Europe/Berlin",
            "30 2 * * *",
            "2026-03-28T00:00:00+00:00",
            ["2026-03-28T01:30:00.000000Z", "2026-03-29T01:00:00.000000Z"],
        ),
        # Berlin falls back at 03:00 CEST to 02:00 CET on 2026-10-25: 02:30 happens twice.
        (
            "Europe/Berlin",
            "30 2 * * *",
            "2026-10-24T00:00:00+00:00",
            ["2026-10-24T00:30:00.000000Z", "2026-10-25T00:30:00.000000Z"],
        ),
        # New York springs forward at 02:00 EST to 03:00 EDT on 2026-03-08.
        (
            "America/New_York",
            "30 2 * * *",
            "2026-03-07T00:00:00+00:00",
            ["2026-03-07T07:30:00.000000Z", "2026-03-08T07:00:00.000000Z"],
        ),
        # New York falls back at 02:00 EDT to 01:00 EST on 2026-11-01: 01:30 happens twice.
        (
            "America/New_York",
            "30 1 * * *",
            "2026-10-31T00:00:00+00:00",
            ["2026-10-31T05:30:00.000000Z", "2026-11-01T05:30:00.000000Z"],
        ),
    ],
)
async def test_daily_job_fires_once_a_day_across_dst(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    zone: str,
    cron: str,
    start: str,
    expected: list[str],
) -> None:
    clock.set(start)
    made = await create(client, auth, cron=cron, timezone=zone, on_overlap="enqueue")
    fired = await _fired_walking(client, auth, tick, made["schedule_id"], _utc(start), 48)
    assert fired == expected
    runs = await runs_of(client, auth, made["schedule_id"])
    assert len(runs) == len(expected)


@pytest.mark.parametrize(
    ("zone", "start", "repeat"),
    [
        ("Europe/Berlin", "2026-10-24T22:00:00+00:00", ["2026-10-25T00:00", "2026-10-25T01:00"]),
        ("America/New_York", "2026-11-01T03:00:00+00:00", ["2026-11-01T05:00", "2026-11-01T06:00"]),
    ],
)
async def test_hourly_job_fires_in_both_repeated_hours(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    clock: Clock,
    tick: Tick,
    zone: str,
    start: str,
    repeat: list[str],
) -> None:
    """Fall-back: 02:00 (Berlin) or 01:00 (New York) local happens twice; an hourly job runs in
    each, an hour apart, never twice at one instant."""
    clock.set(start)
    made = await create(client, auth, cron="0 * * * *", timezone=zone, on_overlap="enqueue")
    fired = await _fired_walking(client, auth, tick, made["schedule_id"], _utc(start), 6)
    for moment in repeat:
        assert f"{moment}:00.000000Z" in fired
    instants = [_utc(each.replace("Z", "+00:00")) for each in fired]
    assert all(b - a == timedelta(hours=1) for a, b in itertools.pairwise(instants))


async def test_spring_forward_hourly_job_has_no_missing_hour_fire(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, tick: Tick
) -> None:
    """Berlin's 02:00-03:00 does not exist on 2026-03-29: an hourly job fires at 01:00 CET and
    03:00 CEST, one real hour apart."""
    start = _utc("2026-03-28T23:30:00+00:00")
    clock.set(start)
    made = await create(
        client, auth, cron="0 * * * *", timezone="Europe/Berlin", on_overlap="enqueue"
    )
    fired = await _fired_walking(client, auth, tick, made["schedule_id"], start, 3)
    assert fired[:3] == [
        isoformat(_utc("2026-03-29T00:00:00+00:00")),  # 01:00 CET
        isoformat(_utc("2026-03-29T01:00:00+00:00")),  # 03:00 CEST
        isoformat(_utc("2026-03-29T02:00:00+00:00")),  # 04:00 CEST
    ]
