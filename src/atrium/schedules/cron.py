"""Fire times of a cron expression in an IANA zone (cronsim: Debian cron's rules, DST included).

Across a spring-forward gap a fire time inside the missing hour fires once at the first instant
after it (02:30 on the day Berlin jumps from 02:00 to 03:00 fires at 03:00); in a fall-back
repeat a fixed-time job fires once, at the first of the two instants, while a job of every hour
or minute fires in both (docs/decisions/0050-schedules.md). Times leave here as UTC.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronsim import CronSim, CronSimError

from atrium.errors import InvalidParameter

MAX_CRON: Final = 200
# Forward steps one look at a schedule takes at most; after a longer outage the look restarts
# near the present, and the fire times before are summed up rather than listed.
MAX_STEPS: Final = 5_000
_ONE_SECOND: Final = timedelta(seconds=1)


def zone(name: str, *, parameter: str = "timezone") -> ZoneInfo:
    """The IANA zone called `name` (`Europe/Berlin`, `UTC`); a 400 naming `parameter` else."""
    if not name or len(name) > 64 or name not in _zone_names():
        raise InvalidParameter(
            parameter, f"{parameter} must be an IANA time zone name, such as Europe/Berlin"
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise InvalidParameter(parameter, f"{parameter} {name!r} is not a known zone") from None


_ZONES: set[str] = set()


def _zone_names() -> set[str]:
    # Read once: `available_timezones` walks the zone database (a few ms).
    if not _ZONES:
        _ZONES.update(available_timezones())
    return _ZONES


def check(expression: str, *, parameter: str = "cron") -> str:
    """A five-field cron expression cronsim takes (minute hour day month weekday); a 400
    naming `parameter` with cronsim's reason else."""
    expression = " ".join(expression.split())
    if not expression or len(expression) > MAX_CRON or not expression.isascii():
        raise InvalidParameter(
            parameter, f"{parameter} must be a cron expression of at most {MAX_CRON} characters"
        )
    try:
        CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise InvalidParameter(
            parameter,
            f"{parameter} is not a valid cron expression ({exc}): five fields, minute hour "
            "day-of-month month day-of-week, such as '0 9 * * MON-FRI'",
        ) from None
    return expression


@dataclass(frozen=True, slots=True)
class Window:
    """When a schedule may fire: not before `starts_at`, not after `ends_at`."""

    starts_at: datetime | None = None
    ends_at: datetime | None = None


def _after(expression: str, tz: ZoneInfo, moment: datetime) -> Iterator[datetime]:
    """The fire times strictly after `moment`, in UTC."""
    for local in CronSim(expression, moment.astimezone(tz)):
        yield local.astimezone(UTC)


def first_at_or_after(
    expression: str, tz: ZoneInfo, moment: datetime, window: Window
) -> datetime | None:
    """The first fire time at or after `moment` inside `window`; None when there is none."""
    start = moment if window.starts_at is None else max(moment, window.starts_at)
    for fire_at in _after(expression, tz, start - _ONE_SECOND):
        if fire_at < start:
            continue
        if window.ends_at is not None and fire_at > window.ends_at:
            return None
        return fire_at
    return None  # pragma: no cover - cronsim's iteration does not end


def upcoming(
    expression: str, tz: ZoneInfo, moment: datetime, window: Window, count: int
) -> list[datetime]:
    """The next `count` fire times at or after `moment` inside `window`."""
    found: list[datetime] = []
    first = first_at_or_after(expression, tz, moment, window)
    if first is None:
        return found
    found.append(first)
    for fire_at in _after(expression, tz, first):
        if len(found) >= count or (window.ends_at is not None and fire_at > window.ends_at):
            break
        found.append(fire_at)
    return found


@dataclass(frozen=True, slots=True)
class Due:
    """The fire times from a schedule's `next_fire_at` up to now.

    `times` holds at most `keep` of them, the latest; `earlier` counts the ones before those
    (when the walk restarted near the present, a lower bound), `earliest` is the first of all.
    `next_fire_at` is the first fire time after now (None: past `ends_at`).
    """

    times: list[datetime]
    earlier: int
    earliest: datetime | None
    next_fire_at: datetime | None


def due(
    expression: str, tz: ZoneInfo, start: datetime, now: datetime, window: Window, keep: int
) -> Due:
    """The fire times in [`start`, `now`] inside `window`, bounded (see `Due`)."""
    kept: deque[datetime] = deque(maxlen=keep)
    earlier = 0
    earliest: datetime | None = None
    fire_at = first_at_or_after(expression, tz, start, window)
    times = _after(expression, tz, fire_at) if fire_at is not None else iter(())
    steps = 0
    while fire_at is not None and fire_at <= now:
        if window.ends_at is not None and fire_at > window.ends_at:
            fire_at = None
            break
        earliest = earliest or fire_at
        if len(kept) == keep:
            earlier += 1
        kept.append(fire_at)
        steps += 1
        if steps == MAX_STEPS:
            # A long outage: go on from close to now, counting what the jump passed over as
            # one more missed fire time at least.
            restart = _restart_near(expression, tz, now, keep)
            if restart > fire_at:
                earlier += len(kept)
                kept.clear()
                times = _after(expression, tz, restart - _ONE_SECOND)
        fire_at = next(times, None)
    if fire_at is not None and window.ends_at is not None and fire_at > window.ends_at:
        fire_at = None
    return Due(list(kept), earlier, earliest, fire_at)


def _restart_near(expression: str, tz: ZoneInfo, now: datetime, keep: int) -> datetime:
    """A moment before `now` with about `keep` fire times or more between it and now: the
    walk's step doubles back from now until it spans them (cronsim walks forward only)."""
    span = timedelta(hours=1)
    while span < timedelta(days=3_660):
        start = now - span
        for count, fire_at in enumerate(_after(expression, tz, start), start=1):
            if fire_at > now:
                break
            if count >= keep:
                return start
        span *= 2
    return now - span
