"""Fixtures of the traces tests: a real OTLP/HTTP receiver, agents made through the API."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.run_fixtures import make_agent
from tests.traces.otlp_receiver import OtlpReceiver

__all__ = ["make_agent"]


@pytest.fixture(scope="module")
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as served:
        yield served
