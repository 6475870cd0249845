"""Fixtures of the webhook tests: fast retries, loopback targets allowed, a receiver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.runs.conftest import make_agent, models  # noqa: F401  (shared fixtures)
from tests.webhooks.receiver import Receiver

FAST = {
    # The receiver listens on loopback.
    "allow_private_targets": True,
    "webhook_poll_seconds": 0.1,
    "webhook_backoff_seconds": 0.05,
    "webhook_backoff_factor": 2.0,
    "webhook_timeout_seconds": 0.5,
    "webhook_max_attempts": 5,
    "run_poll_seconds": 0.2,
}


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return dict(FAST)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()
