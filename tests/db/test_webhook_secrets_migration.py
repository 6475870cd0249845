"""Migration 0012 on each backend: signing secrets stored in clear before it (webhook endpoints'
and runs' own) are sealed with the deployment's key, and its downgrade opens them again."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.db.migrate import alembic_config, upgrade
from atrium.kit.time import utcnow
from atrium.secrets_at_rest import SecretBox
from atrium.settings import Settings
from atrium.webhooks import signing

KEY = "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU="
_accounts = sa.table("accounts", sa.column("id"), sa.column("name"), sa.column("created_at"))
_endpoints = sa.table(
    "webhook_endpoints",
    sa.column("id"),
    sa.column("account_id"),
    sa.column("url"),
    sa.column("events", sa.JSON),
    sa.column("secret"),
    sa.column("created_at"),
)
_threads = sa.table(
    "threads",
    sa.column("id"),
    sa.column("account_id"),
    sa.column("created_at"),
    sa.column("updated_at"),
)
_runs = sa.table(
    "runs",
    sa.column("id"),
    sa.column("account_id"),
    sa.column("thread_id"),
    sa.column("agent_id"),
    sa.column("model"),
    sa.column("agent_config", sa.JSON),
    sa.column("status"),
    sa.column("prompt"),
    sa.column("metadata", sa.JSON),
    sa.column("webhook_url"),
    sa.column("webhook_secret"),
    sa.column("attempts"),
    sa.column("cancel_requested"),
    sa.column("input_tokens"),
    sa.column("output_tokens"),
    sa.column("requests"),
    sa.column("tool_calls"),
    sa.column("credits_micro"),
    sa.column("last_event_seq"),
    sa.column("created_at"),
)


async def _insert_in_clear(url: str, endpoint_secret: str, run_secret: str) -> None:
    """An endpoint and a run with its own webhook, as the schema before 0012 stored them."""
    engine = create_async_engine(url)
    now = utcnow()
    async with engine.begin() as connection:
        await connection.execute(sa.insert(_accounts).values(name="old", created_at=now))
        account = await connection.scalar(sa.select(_accounts.c.id))
        await connection.execute(
            sa.insert(_endpoints).values(
                id="wh_old",
                account_id=account,
                url="https://hooks.example.test/old",
                events=["run.completed"],
                secret=endpoint_secret,
                created_at=now,
            )
        )
        await connection.execute(
            sa.insert(_threads).values(
                id="thr_old", account_id=account, created_at=now, updated_at=now
            )
        )
        await connection.execute(
            sa.insert(_runs).values(
                id="run_old",
                account_id=account,
                thread_id="thr_old",
                agent_id="agt_old",
                model="atrium:offline",
                agent_config={},
                status="completed",
                prompt="hello",
                metadata={},
                webhook_url="https://hooks.example.test/own",
                webhook_secret=run_secret,
                attempts=1,
                cancel_requested=False,
                input_tokens=0,
                output_tokens=0,
                requests=0,
                tool_calls=0,
                credits_micro=0,
                last_event_seq=0,
                created_at=now,
            )
        )
    await engine.dispose()


async def _stored(url: str) -> tuple[str, str]:
    engine = create_async_engine(url)
    async with engine.connect() as connection:
        endpoint = await connection.scalar(sa.select(_endpoints.c.secret))
        run = await connection.scalar(sa.select(_runs.c.webhook_secret))
    await engine.dispose()
    return str(endpoint), str(run)


async def test_secrets_in_clear_are_sealed_and_opened_again_by_the_downgrade(
    empty_database: str,
) -> None:
    settings = Settings(_env_file=None, database_url=empty_database, secrets_key=KEY)
    endpoint_secret, run_secret = signing.new_secret(), signing.new_secret()
    await asyncio.to_thread(upgrade, settings, "0011")
    await _insert_in_clear(empty_database, endpoint_secret, run_secret)

    await asyncio.to_thread(upgrade, settings, "0012")
    sealed = await _stored(empty_database)
    box = SecretBox.of(settings)
    for stored, secret in zip(sealed, (endpoint_secret, run_secret), strict=True):
        assert secret not in stored and secret.removeprefix("whsec_") not in stored
        assert box.decrypt(stored) == secret

    await asyncio.to_thread(command.downgrade, alembic_config(settings), "0011")
    assert await _stored(empty_database) == (endpoint_secret, run_secret)


async def test_without_a_configured_key_sqlite_seals_with_the_key_file(tmp_path: Path) -> None:
    database = tmp_path / "atrium.db"
    settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{database}")
    endpoint_secret, run_secret = signing.new_secret(), signing.new_secret()
    await asyncio.to_thread(upgrade, settings, "0011")
    await _insert_in_clear(settings.database_url, endpoint_secret, run_secret)
    await asyncio.to_thread(upgrade, settings)

    sealed = await _stored(settings.database_url)
    box = SecretBox.of(settings)
    assert [box.decrypt(stored) for stored in sealed] == [endpoint_secret, run_secret]
    key_file = tmp_path / "atrium.db.secrets-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
