"""Domains at scale: load N domains into one account, serve them, time the API over HTTP.

    .venv/bin/python bench/domains_bench.py                       # SQLite, 1,000,000 domains
    .venv/bin/python bench/domains_bench.py \\
        --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/atrium_bench

Rows are loaded with bulk SQL (sqlite3 `executemany` / PostgreSQL `COPY`), not through HTTP; the
database's own triggers keep the search index and the per-account count as they would for API
writes. Then a real server (uvicorn on `atrium.app:create_app`, loopback only) is started against
that database, a key is made with `atrium keys create`, and each scenario is timed as sequential
requests (after a warm-up); p50 and p99 are printed. The server is stopped at the end. A
PostgreSQL database named in the URL is created when missing. Loading is skipped when the
account already holds the rows, so a second run measures only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from harness import free_port, percentile
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parent.parent
ATRIUM = [str(Path(sys.executable).with_name("atrium"))]
ACCOUNT = "bench"
SYLLABLES = [
    "al",
    "be",
    "co",
    "da",
    "el",
    "fa",
    "go",
    "hi",
    "jo",
    "ka",
    "lu",
    "mi",
    "no",
    "pe",
    "qu",
    "ri",
    "sa",
    "te",
    "ul",
    "vo",
    "wa",
    "xi",
    "yo",
    "zu",
    "bar",
    "cor",
    "dun",
    "fen",
    "gal",
    "hop",
    "kin",
    "lom",
    "mar",
    "nor",
    "pix",
    "rud",
    "sol",
    "tam",
    "vex",
    "wim",
    "yak",
    "zor",
    "tech",
    "shop",
    "blog",
    "cloud",
    "data",
    "web",
    "net",
    "mail",
    "host",
    "app",
    "code",
    "dev",
    "media",
    "news",
]
# Unselective: about 90% of the names end in ".com". Selective: ids containing "99999" (~20).
SELECTIVE_TERM = "99999"
UNSELECTIVE_TERM = ".com"


def domain_names(count: int, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    for i in range(1, count + 1):
        tld = "com" if rng.random() < 0.9 else rng.choice(("net", "org", "io", "dev"))
        yield f"{rng.choice(SYLLABLES)}{rng.choice(SYLLABLES)}-{i}.{tld}"


def run_cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*ATRIUM, *args], env=env, cwd=ROOT, check=True, capture_output=True, text=True
    )
    return done.stdout


async def ensure_database(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        return
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        exists = await conn.scalar(
            text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": parsed.database}
        )
        if not exists:
            await conn.execute(text(f'CREATE DATABASE "{parsed.database}"'))
    await admin.dispose()


async def account_state(url: str) -> tuple[int, int]:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        account_id = await conn.scalar(
            text("SELECT id FROM accounts WHERE name = :name"), {"name": ACCOUNT}
        )
        total = await conn.scalar(
            text("SELECT total FROM domain_counts WHERE account_id = :id"), {"id": account_id}
        )
    await engine.dispose()
    return int(account_id), int(total or 0)


def load_sqlite(path: str, account_id: int, rows: int) -> None:
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    batch: list[tuple[int, str, str, str]] = []
    with conn:
        for i, name in enumerate(domain_names(rows)):
            created = (stamp + timedelta(seconds=i)).strftime("%Y-%m-%d %H:%M:%S.%f")
            batch.append((account_id, name, created, created))
            if len(batch) == 50_000:
                conn.executemany(
                    "INSERT INTO domains (account_id, name, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?)",
                    batch,
                )
                batch.clear()
        conn.executemany(
            "INSERT INTO domains (account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?)",
            batch,
        )
    conn.close()


async def load_postgres(url: str, account_id: int, rows: int) -> None:
    import asyncpg

    parsed = make_url(url).set(drivername="postgresql")
    conn = await asyncpg.connect(parsed.render_as_string(hide_password=False))
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    batch: list[tuple[int, str, datetime, datetime]] = []
    columns = ["account_id", "name", "created_at", "updated_at"]
    for i, name in enumerate(domain_names(rows)):
        created = stamp + timedelta(seconds=i)
        batch.append((account_id, name, created, created))
        if len(batch) == 100_000:
            await conn.copy_records_to_table("domains", records=batch, columns=columns)
            batch.clear()
    if batch:
        await conn.copy_records_to_table("domains", records=batch, columns=columns)
    # What autovacuum would do soon after such a load: statistics and the visibility map.
    await conn.execute("VACUUM ANALYZE domains")
    await conn.close()


def start_server(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "uvicorn", "atrium.app:create_app", "--factory"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen(command, env=env, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not become healthy within 60 s")


def measure(client: httpx.Client, name: str, paths: list[str], warmup: int) -> None:
    for path in paths[:warmup]:
        client.get(path).raise_for_status()
    samples: list[float] = []
    total = -1
    for path in paths:
        started = time.perf_counter()
        response = client.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        total = response.json().get("meta", {}).get("total", total)
    p50, p99 = statistics.median(samples), percentile(samples, 0.99)
    print(f"{name:<28} n={len(samples):<4} p50={p50:8.2f} ms  p99={p99:8.2f} ms  total={total}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url", help="default: a SQLite file in a temporary directory, removed after"
    )
    parser.add_argument("--rows", type=int, default=1_000_000, help="domains in the account")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per scenario")
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests first")
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="atrium-bench-")
    url = args.database_url or f"sqlite+aiosqlite:///{workdir}/bench.db"
    env = {**os.environ, "ATRIUM_DATABASE_URL": url, "ATRIUM_LOG_LEVEL": "WARNING"}
    # The bench must measure the queries, not the rate limiter's 429s.
    env["ATRIUM_RATE_LIMIT_STANDARD"] = "100000000/hour"
    print(f"database: {make_url(url).render_as_string()}  load average: {os.getloadavg()}")

    asyncio.run(ensure_database(url))
    key = run_cli(env, "keys", "create", "--account", ACCOUNT).strip().splitlines()[-1]
    account_id, total = asyncio.run(account_state(url))
    if total < args.rows:
        if total:
            raise SystemExit(f"account '{ACCOUNT}' holds {total} domains; use a fresh database")
        started = time.perf_counter()
        if make_url(url).get_backend_name() == "sqlite":
            load_sqlite(str(make_url(url).database), account_id, args.rows)
        else:
            asyncio.run(load_postgres(url, account_id, args.rows))
        print(f"loaded {args.rows} domains in {time.perf_counter() - started:.1f} s")

    port = free_port()
    server = start_server(env, port)
    rng = random.Random(1)
    n = args.requests
    base = "/api/v1/domains"
    last_page = max(1, (args.rows + 49) // 50)
    try:
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as client:
            first_id = client.get(base, params={"sort": "asc", "per_page": 10}).json()["data"][0]
            ids = [first_id["id"] + rng.randrange(args.rows) for _ in range(n)]
            deep = min(10_000, last_page)
            scenarios = {
                "show by id": [f"{base}/{i}" for i in ids],
                "list page 1 (defaults)": [base] * n,
                f"list page {deep}": [f"{base}?page={deep}"] * n,
                f"search {SELECTIVE_TERM!r} (selective)": [f"{base}?search={SELECTIVE_TERM}"] * n,
                f"search {UNSELECTIVE_TERM!r} (most rows)": [f"{base}?search={UNSELECTIVE_TERM}"]
                * n,
            }
            for name, paths in scenarios.items():
                measure(client, name, paths, args.warmup)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if not args.database_url:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
