"""Usage analytics at scale: 1,000,000 finished runs over 365 days and 50 agents, timed over HTTP.

    .venv/bin/python bench/analytics_bench.py                     # SQLite file in a temp dir
    .venv/bin/python bench/analytics_bench.py \\
        --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/atrium_bench_analytics

Analytics reads the per-day, per-agent rollup (`agent_usage_daily`), never the runs table, so
the runs' effect is loaded as the rollup rows that `record_run_usage` would have produced for
them: 365 days x 50 agents, their counters summing to exactly `--runs` runs (the tokens, credits
and requests of each run drawn at random). Agents are made through the agents service. Then a
real server (uvicorn on `atrium.app:create_app`, loopback only) is started against the database
and `GET /v1/analytics/usage` is timed for a 30-day and a 365-day range, as sequential requests
after a warm-up; p50 and p99 are printed. The server is stopped at the end. A PostgreSQL database
named in the URL is created when missing; each run loads a fresh account.

`--write-samples N` also times `record_run_usage` (one finished run per transaction, the cost a
worker pays for keeping the rollup), directly on the database.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from harness import free_port, percentile
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.agents.model_check import ModelCheck
from atrium.agents.schemas import AgentCreate
from atrium.agents.service import create_agent
from atrium.analytics.service import record_run_usage
from atrium.auth.service import create_key
from atrium.db.engine import Database
from atrium.db.migrate import upgrade
from atrium.db.models import AgentUsageDaily
from atrium.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
LAST_DAY = datetime.date(2026, 6, 30)


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


def split(total: int, weights: list[float], rng: random.Random) -> list[int]:
    """`total` split over the weights, summing exactly to `total`."""
    scale = total / sum(weights)
    shares = [int(weight * scale) for weight in weights]
    for index in rng.sample(range(len(shares)), total - sum(shares)):
        shares[index] += 1
    return shares


def rollup_rows(
    account_id: int, agent_ids: list[str], days: int, runs: int, seed: int
) -> list[dict[str, object]]:
    """What `runs` finished runs leave in the rollup, spread unevenly over days and agents."""
    rng = random.Random(seed)
    cells = [(day, agent) for day in range(days) for agent in agent_ids]
    per_cell = split(runs, [rng.uniform(0.2, 1.8) for _ in cells], rng)
    rows: list[dict[str, object]] = []
    for (day, agent_id), count in zip(cells, per_cell, strict=True):
        failed = int(count * rng.uniform(0.0, 0.1))
        cancelled = int(count * rng.uniform(0.0, 0.05))
        rows.append(
            {
                "account_id": account_id,
                "day": LAST_DAY - datetime.timedelta(days=day),
                "agent_id": agent_id,
                "runs": count,
                "completed": count - failed - cancelled,
                "failed": failed,
                "cancelled": cancelled,
                "input_tokens": count * rng.randrange(200, 4_000),
                "output_tokens": count * rng.randrange(50, 1_500),
                "credits_micro": count * rng.randrange(100, 20_000),
                "requests": count * rng.randrange(1, 6),
            }
        )
    return rows


async def load(settings: Settings, args: argparse.Namespace) -> tuple[str, list[str]]:
    """A fresh account with its agents and rollup; returns its (premium) key and agent ids."""
    db = Database(settings)
    try:
        async with db.transaction() as session:
            issued = await create_key(
                session, account_name=f"analytics-bench-{secrets.token_hex(3)}", tier="premium"
            )
            agents = [
                await create_agent(
                    session,
                    account_id=issued.account_id,
                    data=AgentCreate(name=f"bench agent {n}"),
                    models=ModelCheck(settings),
                )
                for n in range(args.agents)
            ]
        agent_ids = [agent.id for agent in agents]
        rows = rollup_rows(issued.account_id, agent_ids, args.days, args.runs, args.seed)
        started = time.perf_counter()
        async with db.transaction() as session:
            for offset in range(0, len(rows), 5_000):
                await session.execute(insert(AgentUsageDaily), rows[offset : offset + 5_000])
        async with db.write_engine.connect() as conn:
            # What autovacuum / a later ANALYZE would do soon after such a load.
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(
                text("VACUUM ANALYZE agent_usage_daily" if not db.sqlite else "ANALYZE")
            )
        print(
            f"loaded {len(rows):,} rollup rows = {args.runs:,} runs, {args.agents} agents, "
            f"{args.days} days in {time.perf_counter() - started:.1f} s"
        )
        if args.write_samples:
            await time_writes(db, issued.account_id, agent_ids, args.write_samples)
        return issued.key, agent_ids
    finally:
        await db.dispose()


async def time_writes(db: Database, account_id: int, agent_ids: list[str], count: int) -> None:
    rng = random.Random(1)
    samples: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        async with db.transaction() as session:
            await record_run_usage(
                session,
                account_id=account_id,
                agent_id=rng.choice(agent_ids),
                day=LAST_DAY,
                status="completed",
                input_tokens=100,
                output_tokens=10,
                credits_micro=1_000,
                requests=1,
            )
        samples.append((time.perf_counter() - started) * 1000)
    print(
        f"record_run_usage (1 run per transaction), n={count}: "
        f"p50 {percentile(samples, 0.5):.2f} ms  p99 {percentile(samples, 0.99):.2f} ms"
    )


def start_server(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "atrium.app:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        env=env,
        cwd=ROOT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if server.poll() is not None:
            raise SystemExit("the server exited during start-up")
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("the server did not start within 30 s")


def measure(
    http: httpx.Client, label: str, params: dict[str, str], requests: int, warmup: int
) -> dict[str, object]:
    for _ in range(warmup):
        http.get("/v1/analytics/usage", params=params).raise_for_status()
    samples: list[float] = []
    body: dict[str, object] = {}
    for _ in range(requests):
        started = time.perf_counter()
        response = http.get("/v1/analytics/usage", params=params)
        samples.append((time.perf_counter() - started) * 1000)
        response.raise_for_status()
        body = response.json()
    print(
        f"{label:<28} n={requests}  p50 {percentile(samples, 0.5):7.2f} ms  "
        f"p99 {percentile(samples, 0.99):7.2f} ms  mean {statistics.fmean(samples):7.2f} ms"
    )
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--database-url", help="SQLAlchemy async URL (default: a new SQLite file in a temp dir)"
    )
    parser.add_argument("--runs", type=int, default=1_000_000, help="finished runs to represent")
    parser.add_argument("--days", type=int, default=365, help="days the runs spread over")
    parser.add_argument("--agents", type=int, default=50, help="agents the runs spread over")
    parser.add_argument("--requests", type=int, default=300, help="timed requests per scenario")
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests per scenario")
    parser.add_argument("--write-samples", type=int, default=0, help="also time N usage writes")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    url = args.database_url
    if url is None:
        workdir = tempfile.mkdtemp(prefix="atrium-analytics-bench-")
        url = f"sqlite+aiosqlite:///{workdir}/bench.db"
    settings = Settings(database_url=url, _env_file=None)
    asyncio.run(ensure_database(url))
    upgrade(settings)
    key, _ = asyncio.run(load(settings, args))

    env = {
        **os.environ,
        "ATRIUM_DATABASE_URL": url,
        "ATRIUM_LOG_LEVEL": "WARNING",
        # The bench's own requests must not hit the API's hourly budget.
        "ATRIUM_RATE_LIMIT_PREMIUM": "10000000/hour",
    }
    port = free_port()
    print(f"cores {os.cpu_count()}, load average before: {os.getloadavg()}")
    server = start_server(env, port)
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {key}"},
            timeout=30,
        ) as http:
            end = LAST_DAY.isoformat()
            month = {"start_date": (LAST_DAY - datetime.timedelta(days=29)).isoformat()}
            year = {"start_date": (LAST_DAY - datetime.timedelta(days=args.days - 1)).isoformat()}
            measure(http, "usage, 30 days", {**month, "end_date": end}, args.requests, args.warmup)
            body = measure(
                http,
                f"usage, {args.days} days",
                {**year, "end_date": end},
                args.requests,
                args.warmup,
            )
            totals = body["totals"]
            expected = args.runs + args.write_samples  # the timed writes land on the last day
            assert isinstance(totals, dict) and totals["runs"] == expected, totals
            print(f"check: the {args.days}-day report counts {totals['runs']:,} runs")
    finally:
        server.terminate()
        server.wait(timeout=15)
        print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
