"""Fixtures of the migration tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, database_of_its_own


@pytest.fixture(params=BACKENDS)
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, not migrated yet."""
    async with database_of_its_own(request.param, tmp_path / "atrium.db") as url:
        yield url
