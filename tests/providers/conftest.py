"""Fixtures of the providers tests: agents made through the API, the worker's registry."""

from tests.run_fixtures import make_agent, models

__all__ = ["make_agent", "models"]
