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
    return as_utc(value).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
