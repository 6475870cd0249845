"""Fixtures of the schedules tests: a clock the tests set (`ATRIUM_SCHEDULE_CLOCK_FILE`, read
by the API and the firing loop alike), and the app's firing loop, driven by `tick`.

The loop's own poll is an hour: firings happen when a test ticks, at the time it gives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

import pytest
from fastapi import FastAPI

from atrium.kit.time import as_utc
from tests.run_fixtures import make_agent, models

__all__ = ["make_agent", "models"]


class Clock:
    """The schedules' current time, as a file every process reads."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def set(self, moment: datetime | str) -> datetime:
        when = as_utc(datetime.fromisoformat(moment) if isinstance(moment, str) else moment)
        # Replaced whole: a process reading a truncated file would take the system clock.
        staged = self.path.with_suffix(".new")
        staged.write_text(when.isoformat())
        staged.replace(self.path)
        return when


@pytest.fixture(scope="session")
def clock_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp() / "schedule-clock.txt"


@pytest.fixture
def clock(clock_path: Path) -> Clock:
    made = Clock(clock_path)
    made.set("2026-01-05T08:00:00+00:00")
    return made


@pytest.fixture
def settings_overrides(clock: Clock) -> dict[str, object]:
    """Asks for `clock`, so the clock is back at its start before the app is made: a new app's
    firing loop looks once as it starts, and a look that read the previous test's later time
    but queried after this test made its schedules fired them up to that time."""
    return {"schedule_clock_file": str(clock.path), "schedule_poll_seconds": 3600.0}


Tick = Callable[..., Awaitable[int]]


@pytest.fixture
def tick(app: FastAPI, clock: Clock) -> Tick:
    """`await tick("2026-03-29T01:00:00Z")`: set the clock, and let the app's firing loop look
    once (as its poll would)."""

    async def look(moment: datetime | str | None = None) -> int:
        when = clock.set(moment) if moment is not None else None
        looked: int = await app.state.workers.schedules.tick(when)
        return looked

    return look
