"""The schedules' current time: the system clock, or for tests the time a file holds
(`ATRIUM_SCHEDULE_CLOCK_FILE`), read by every process alike so several processes share one
controllable clock."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path

from atrium.kit.time import as_utc, utcnow
from atrium.settings import Settings

log = logging.getLogger("atrium.schedules")


def now(settings: Settings) -> datetime:
    """The time schedules take as now (UTC)."""
    if settings.schedule_clock_file is None:
        return utcnow()
    try:
        text = Path(settings.schedule_clock_file).read_text().strip()
        return as_utc(datetime.fromisoformat(text))
    except (OSError, ValueError):
        log.warning("ATRIUM_SCHEDULE_CLOCK_FILE unreadable; the system clock stands in")
        return utcnow()
