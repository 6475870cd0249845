"""Apply Alembic migrations from code (`atrium serve`, `atrium migrate`, the tests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config

from atrium.db.files import make_private_database_file
from atrium.settings import Settings

MIGRATIONS = Path(__file__).with_name("migrations")


@dataclass(frozen=True)
class Upgraded:
    """What `upgrade` did: the revisions it applied, oldest first (none when the database was
    already there), and the revision the database is at now."""

    applied: tuple[str, ...]
    current: str | None


def alembic_config(settings: Settings) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = settings.database_url
    # For the migrations that seal or open secrets with the deployment's key.
    config.attributes["settings"] = settings
    return config


def upgrade(settings: Settings, revision: str = "head") -> Upgraded:
    """Bring the database to `revision`; safe to run on every start. A SQLite file and its
    folder are made private first (`db.files`)."""
    make_private_database_file(settings.database_url)
    config = alembic_config(settings)
    # The environment (migrations/env.py) fills these in as it goes.
    applied: list[str] = []
    config.attributes["applied"] = applied
    command.upgrade(config, revision)
    return Upgraded(applied=tuple(applied), current=config.attributes.get("current"))
