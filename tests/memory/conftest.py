"""Fixtures of the memory tests: agents made through the API, models registered on the app."""

from tests.run_fixtures import make_agent, models

__all__ = ["make_agent", "models"]
