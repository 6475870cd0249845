"""Fixtures for the spaces tests: a generous rate limit, so a test is never throttled."""

from __future__ import annotations

import pytest


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"rate_limit_standard": "1000000/hour", "public_url": "https://atrium.example.org"}
