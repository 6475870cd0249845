"""Secrets: keys are stored only as hashes (the whole database is searched for them), no key or
prompt reaches the logs at the default level, and `/metrics` carries no account data."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.db.base import Base
from tests.conftest import KeyFactory, bearer
from tests.processes import run_atrium
from tests.reliability.conftest import seed_account
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.worker.processes import AtriumProcess, process_env

PROMPT = "the secret plan of zebra-quartz-7781"
WRONG_KEY = "atr_" + "W" * 43


async def _database_text(database_url: str, tmp_dir: Path | None = None) -> str:
    """Everything the database holds, as text: every row of every table (and, for SQLite, the
    raw bytes of the file and its write-ahead log, where deleted or old rows may linger)."""
    engine = create_async_engine(database_url)
    parts: list[str] = []
    async with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            if engine.dialect.name == "postgresql":
                rows = await conn.execute(text(f"SELECT row_to_json(t)::text FROM {table.name} t"))
            else:
                rows = await conn.execute(text(f"SELECT * FROM {table.name}"))
            parts.extend(str(tuple(row)) for row in rows)
    await engine.dispose()
    if database_url.startswith("sqlite"):
        path = Path(database_url.split("///", 1)[1])
        for file in (path, path.with_name(path.name + "-wal")):
            if file.exists():
                parts.append(file.read_bytes().decode("latin-1"))
    return "\n".join(parts)


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"rate_limit_anonymous": "1000000/hour"}


async def test_no_key_is_stored_anywhere_in_the_database(
    client: httpx.AsyncClient, make_key: KeyFactory, database_url: str
) -> None:
    keys = [await make_key(), await make_key(tier="premium")]
    for issued in keys:  # used, so every table a request touches has seen them
        await seed_account(client, bearer(issued.key), f"secret-{issued.key_id}")
    stored = await _database_text(database_url)
    assert "atr_" in stored  # the display prefixes are there, so the search reads real data
    for issued in keys:
        random_part = issued.key.removeprefix("atr_")
        assert issued.key not in stored
        assert random_part not in stored
        assert random_part[8:] not in stored  # nothing past the 12-character display prefix


async def test_metrics_carry_no_account_data(
    client: httpx.AsyncClient, make_key: KeyFactory
) -> None:
    issued = await make_key(account="metrics-secret-account")
    headers = bearer(issued.key)
    seeded = await seed_account(client, headers, "metrics-secret")
    await client.get("/api/v1/domains", params={"search": "metrics-secret"}, headers=headers)
    await client.get(f"{RUNS}/run_doesnotexist", headers=headers)
    await client.get(f"/api/v1/domains/{seeded.domain_id}", headers=headers)
    await client.get("/v1/account", headers=bearer(WRONG_KEY))
    body = (await client.get("/metrics")).text
    assert "atrium_http_requests_total" in body
    for secret in (
        issued.key,
        issued.key[:12],
        "metrics-secret",  # account, domain, space and agent names, search terms, prompts
        seeded.agent_id,
        seeded.run_id,
        seeded.artifact_id,
        "run_doesnotexist",
        WRONG_KEY,
    ):
        assert secret not in body, secret
    assert f"/api/v1/domains/{seeded.domain_id}" not in body
    assert 'route="/api/v1/domains/{id}"' in body  # ids become their template


async def test_logs_at_the_default_level_carry_no_key_and_no_prompt(tmp_path: Path) -> None:
    env = process_env(tmp_path, rate_limit_anonymous="1000000/hour")
    env.pop("ATRIUM_LOG_LEVEL", None)  # the default level
    env["ATRIUM_LLM_BASE_URL"] = "http://127.0.0.1:9/v1"  # nothing listens: the run fails
    bootstrap = env["ATRIUM_BOOTSTRAP_KEY"]
    server = AtriumProcess.serve(env, tmp_path / "serve.log")
    try:
        await server.ready()
        # In a thread: the test's event loop keeps running while the command does.
        created = await asyncio.to_thread(
            run_atrium, ["keys", "create", "--account", "second"], env=env
        )
        second_key = created.stdout.strip().splitlines()[-1]
        assert second_key.startswith("atr_")
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            for key in (second_key,):
                auth = bearer(key)
                run = await create_run(http, auth, PROMPT)
                await wait_finished(http, auth, run["run_id"])
                await http.get(f"{RUNS}/{run['run_id']}/events", headers=auth)
                failing = await http.post(
                    "/v1/agents",
                    json={"name": "no model", "config": {"model": "openai-compatible:none"}},
                    headers=auth,
                )
                assert failing.status_code == 201, failing.text
                failed = await create_run(
                    http, auth, PROMPT + " (fails)", agent_id=failing.json()["agent_id"]
                )
                done = await wait_finished(http, auth, failed["run_id"])
                assert done["status"] == "failed"
                await http.post(RUNS, json={"prompt": PROMPT * 2000}, headers=auth)  # 400
                await http.post(RUNS, content=PROMPT.encode(), headers=auth)  # not JSON
                await http.post(
                    "/api/v1/domains", data={"name": PROMPT}, headers=auth
                )  # invalid name
            await http.get("/v1/account", headers=bearer(WRONG_KEY))
            await http.get("/v1/account", headers={"Authorization": WRONG_KEY})
            await http.get("/v1/account", headers=bearer(bootstrap))
        await asyncio.sleep(0.5)  # let the last log lines reach the file
    finally:
        server.stop()
    output = server.log.read_text()
    # The bootstrap key is printed once, by design, on the first start: only that line has it.
    announced = [line for line in output.splitlines() if bootstrap in line]
    assert announced == [bootstrap], announced
    rest = "\n".join(line for line in output.splitlines() if line != bootstrap)
    assert "POST /api/v1/public/agent/runs" in rest  # the access log is on and was read
    for secret in (second_key, second_key[4:], bootstrap[4:], WRONG_KEY, "zebra-quartz"):
        assert secret not in rest, f"{secret[:16]}… found in the server log:\n{rest[-3000:]}"
