"""Apply Alembic migrations from code (`atrium serve`, `atrium migrate`, the tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from atrium.settings import Settings

MIGRATIONS = Path(__file__).with_name("migrations")


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = settings.database_url
    return config


def upgrade(settings: Settings, revision: str = "head") -> None:
    """Bring the database to `revision`; safe to run on every start."""
    command.upgrade(alembic_config(settings), revision)
