"""Fixtures of the migration tests."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, _create_postgres_database


@pytest.fixture(params=BACKENDS)
async def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A database of its own, not migrated yet."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}"
        return
    url, drop = await _create_postgres_database(os.environ["ATRIUM_TEST_POSTGRES_URL"])
    try:
        yield url
    finally:
        await drop()
