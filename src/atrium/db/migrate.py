"""Apply Alembic migrations from code (`atrium serve`, `atrium migrate`, the tests)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

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


def migrate(settings: Settings) -> Upgraded:
    """`upgrade` to the newest revision, as every server-side command does before it starts."""
    upgraded = upgrade(settings)
    _warn_if_secrets_in_clear(settings)
    return upgraded


def _warn_if_secrets_in_clear(settings: Settings) -> None:
    """A PostgreSQL deployment without `ATRIUM_SECRETS_KEY` stores webhook signing secrets in
    clear (`webhooks.signing.sealed`): said at every start until the key is set."""
    if (
        settings.secrets_key is None
        and make_url(settings.database_url).get_backend_name() != "sqlite"
    ):
        logging.getLogger("atrium").warning(
            "ATRIUM_SECRETS_KEY is not set: webhook signing secrets are stored in clear in the "
            "database (docs/guide/deploy.md#secrets-at-rest)"
        )
