"""Migration 0018 on each backend: every agent gets version 1, its config as it is, hashed;
runs created before keep `agent_version` null; the downgrade drops it all again."""

from __future__ import annotations

import asyncio
import json

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.db.migrate import alembic_config, upgrade
from atrium.kit.canonical_json import content_hash
from atrium.kit.time import utcnow
from atrium.settings import Settings

CONFIG = {
    "model": "atrium:offline",
    "temperature": 0.3,
    "instructions": "Be brief. Ünïcode too.",
    "max_output_tokens": None,
    "tools": ["write_artifact"],
}
_accounts = sa.table("accounts", sa.column("id"), sa.column("name"), sa.column("created_at"))
_agents = sa.table(
    "agents",
    sa.column("id"),
    sa.column("account_id"),
    sa.column("name"),
    sa.column("description"),
    sa.column("config", sa.JSON),
    sa.column("is_default"),
    sa.column("created_at"),
    sa.column("updated_at"),
)
_threads = sa.table(
    "threads", sa.column("id"), sa.column("account_id"), sa.column("created_at"),
    sa.column("updated_at"),
)  # fmt: skip
_runs = sa.table(
    "runs",
    *(sa.column(name) for name in ("id", "account_id", "thread_id", "agent_id", "model")),
    sa.column("agent_config", sa.JSON),
    sa.column("metadata", sa.JSON),
    *(sa.column(name) for name in ("status", "prompt", "attempts", "cancel_requested")),
    *(sa.column(name) for name in ("input_tokens", "output_tokens", "requests", "tool_calls")),
    *(sa.column(name) for name in ("credits_micro", "last_event_seq", "created_at")),
)


async def _insert_before(url: str) -> None:
    engine = create_async_engine(url)
    now = utcnow()
    async with engine.begin() as connection:
        await connection.execute(sa.insert(_accounts).values(name="old", created_at=now))
        account = await connection.scalar(sa.select(_accounts.c.id))
        agent = {"account_id": account, "description": "", "created_at": now, "updated_at": now}
        await connection.execute(
            sa.insert(_agents),
            [
                {**agent, "id": "agt_one", "name": "One", "config": CONFIG, "is_default": False},
                {**agent, "id": "agt_two", "name": "Two", "config": {}, "is_default": True},
            ],
        )
        await connection.execute(
            sa.insert(_threads).values(
                id="thr_old", account_id=account, created_at=now, updated_at=now
            )
        )
        await connection.execute(
            sa.insert(_runs).values(
                id="run_old", account_id=account, thread_id="thr_old", agent_id="agt_one",
                model="atrium:offline", agent_config=CONFIG, metadata={}, status="completed",
                prompt="hello", attempts=1, cancel_requested=False, input_tokens=0,
                output_tokens=0, requests=0, tool_calls=0, credits_micro=0, last_event_seq=0,
                created_at=now,
            )
        )  # fmt: skip
    await engine.dispose()


async def test_agents_get_version_1_and_old_runs_none(empty_database: str) -> None:
    settings = Settings(_env_file=None, database_url=empty_database)
    await asyncio.to_thread(upgrade, settings, "0017")
    await _insert_before(empty_database)
    await asyncio.to_thread(upgrade, settings, "0018")

    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        versions = (
            await connection.execute(
                sa.text(
                    "SELECT agent_id, number, config, content_hash, restored_from "
                    "FROM agent_versions ORDER BY agent_id"
                )
            )
        ).all()
        live = dict((await connection.execute(sa.text("SELECT id, version FROM agents"))).all())
        run_version = await connection.scalar(sa.text("SELECT agent_version FROM runs"))
    await engine.dispose()
    assert [(row.agent_id, row.number, row.restored_from) for row in versions] == [
        ("agt_one", 1, None),
        ("agt_two", 1, None),
    ]
    stored = versions[0].config
    assert (stored if isinstance(stored, dict) else json.loads(stored)) == CONFIG
    assert versions[0].content_hash == content_hash(CONFIG)
    assert versions[1].content_hash == content_hash({})
    assert live == {"agt_one": 1, "agt_two": 1}
    assert run_version is None

    await asyncio.to_thread(command.downgrade, alembic_config(settings), "0017")
    engine = create_async_engine(empty_database)
    async with engine.connect() as connection:
        tables = await connection.run_sync(lambda sync: sa.inspect(sync).get_table_names())
        run_columns = await connection.run_sync(
            lambda sync: {column["name"] for column in sa.inspect(sync).get_columns("runs")}
        )
    await engine.dispose()
    assert "agent_versions" not in tables and "agent_aliases" not in tables
    assert "agent_version" not in run_columns
