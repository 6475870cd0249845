"""Fixtures of the worker tests: agents made through the API, models registered on the app,
a write batcher."""

from tests.run_fixtures import batcher, make_agent, models

__all__ = ["batcher", "make_agent", "models"]
