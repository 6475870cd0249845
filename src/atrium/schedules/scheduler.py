"""The firing loop: in every process that executes runs (`atrium worker`, `atrium serve`'s
in-process worker), every `ATRIUM_SCHEDULE_POLL_SECONDS` it fires the schedules whose next fire
time has come, each in a transaction of its own (`firing.fire_due`). Any number of processes
may run it at once: a schedule another holds is skipped, and a fire time already recorded is
never recorded again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from datetime import datetime, timedelta
from typing import Final

from atrium.db.engine import Database
from atrium.db.models import ScheduleFiring
from atrium.runs.events.broker import Broker
from atrium.schedules import clock, firing, repository
from atrium.schedules.errors import ScheduleNotFound
from atrium.schedules.firing import Outcome
from atrium.settings import Settings
from atrium.webhooks import outbox

log = logging.getLogger("atrium.schedules")
# Schedules one look fires at most; more due ones wait for the next look (at once: it goes on
# while a look finds a full batch).
_BATCH: Final = 50


def _sent(outcome: Outcome, broker: Broker) -> None:
    for announcement in outcome.announcements:
        announcement.send(broker)
    if outcome.deliveries:
        outbox.wake_senders()


class Scheduler:
    """Fires the due schedules of the database, from this process."""

    def __init__(self, *, settings: Settings, db: Database, broker: Broker) -> None:
        self.settings = settings
        self.db = db
        self.broker = broker
        self._task: asyncio.Task[None] | None = None
        self._rules = firing.Rules(
            grace=timedelta(seconds=settings.schedule_misfire_grace_seconds),
            catch_up_limit=settings.schedule_catch_up_limit,
        )

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="atrium-schedules")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            try:
                while await self.tick() >= _BATCH:
                    pass
            except Exception:  # the next look tries again
                log.exception("firing schedules failed; trying again later")
            await asyncio.sleep(self.settings.schedule_poll_seconds)

    async def tick(self, now: datetime | None = None) -> int:
        """Fire what is due at `now` (default: the schedules' clock); how many schedules were
        looked at."""
        now = now or clock.now(self.settings)
        due = await repository.due_ids(self.db, now=now, limit=_BATCH)
        for schedule_id in due:
            outcome = await self.db.write_sync(
                functools.partial(
                    firing.fire_due, schedule_id=schedule_id, now=now, rules=self._rules
                )
            )
            if outcome is not None:
                _sent(outcome, self.broker)
        return len(due)


async def trigger(
    db: Database, broker: Broker, *, settings: Settings, account_id: int, schedule_id: str
) -> ScheduleFiring:
    """`POST …/trigger`: a firing now, in a transaction of its own (its run is announced once
    committed)."""
    if not repository.ID_PATTERN.match(schedule_id):
        raise ScheduleNotFound(schedule_id)
    now = clock.now(settings)
    outcome = await db.write_sync(
        lambda session: firing.fire_now(
            session, schedule_id=schedule_id, account_id=account_id, now=now
        )
    )
    if outcome is None:
        raise ScheduleNotFound(schedule_id)
    _sent(outcome, broker)
    if not outcome.firings:  # pragma: no cover - a manual fire time at this microsecond exists
        raise ScheduleNotFound(schedule_id)
    return outcome.firings[0]
