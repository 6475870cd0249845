"""UTC time helpers and the one timestamp format of the API."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes: they are UTC by construction."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def isoformat(value: datetime) -> str:
    """`2026-01-01T10:00:00.000000Z`, the Laravel/phpShort format used in every response."""
    if value.tzinfo is not None and value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    if value.year < 1000:  # strftime's %Y does not pad them
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    # Every event's timestamp goes through here: a third of strftime's CPU.
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:"
        f"{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}Z"
    )
