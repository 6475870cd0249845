"""Does another account's data change how long *my* domain search takes?
(docs/decisions/0021-domain-search.md)

    .venv/bin/python bench/search_isolation_bench.py                  # SQLite, temporary file
    .venv/bin/python bench/search_isolation_bench.py \\
        --database-url postgresql+asyncpg://postgres@127.0.0.1:5432/atrium_isolation_bench

Two accounts on one database: the *victim* holds `--victim-rows` domains, `--hits` of which
contain the term `qzv`; the *prober* holds `--prober-rows` domains, none containing `qzv`,
`qzj` or `qzk`. The prober searches its own list for each of the three terms, interleaved in a
random order per round, `--rounds` times, through the real app in-process (HTTP over ASGI: the
endpoint, the service, the repository and the database, without a socket's noise). Every
answer is the same empty page; the only difference between the terms is whether *another
account* holds names containing it.

Printed per term: the median time and the middle 50 %; then two differences of medians and
their probability of superiority (how often a random sample of one term is slower than one of
the other; 0.50 = indistinguishable):
- signal: `qzv` (the victim's term) against `qzj` (no one's): what the prober can learn;
- noise floor: `qzk` against `qzj` (both no one's): what the same measurement shows when there
  is nothing to learn.
A leak shows as a signal well above the noise floor. The CPU calibration and the load average
are printed beside the figures: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from asgi_lifespan import LifespanManager
from sqlalchemy import insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from atrium.app import create_app
from atrium.auth.service import create_key
from atrium.db.engine import Database
from atrium.db.migrate import upgrade
from atrium.db.models import Domain
from atrium.kit.time import utcnow
from atrium.settings import Settings

sys.path.insert(0, str(Path(__file__).parent))
from harness import calibration_ms

SECRET, ABSENT, ABSENT_TOO = "qzv", "qzj", "qzk"


async def fresh_postgres(url: str) -> str:
    """A new database beside the one named (dropped again at the end), so runs never mix."""
    parsed = make_url(url)
    name = f"atrium_isolation_{secrets.token_hex(3)}"
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await admin.dispose()
    return parsed.set(database=name).render_as_string(hide_password=False)


async def drop_postgres(url: str) -> None:
    parsed = make_url(url)
    admin = create_async_engine(parsed.set(database="postgres"), isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{parsed.database}" WITH (FORCE)'))
    await admin.dispose()


async def load(db: Database, account_id: int, names: list[str]) -> None:
    now = utcnow()
    rows = [
        {"account_id": account_id, "name": name, "created_at": now, "updated_at": now}
        for name in names
    ]
    for start in range(0, len(rows), 10_000):
        async with db.transaction() as session:
            await session.execute(insert(Domain), rows[start : start + 10_000])


def victim_names(rows: int, hits: int) -> list[str]:
    every = max(rows // max(hits, 1), 1)
    return [
        f"shop-{SECRET}{i}.example"
        if hits and i % every == 0 and i // every < hits
        else f"shop-{i}.example"
        for i in range(rows)
    ]


def superiority(slower: list[float], faster: list[float]) -> float:
    """P(a sample of `slower` > a sample of `faster`), ties half (Mann-Whitney U / n·m)."""
    ranked = sorted([(v, 0) for v in slower] + [(v, 1) for v in faster])
    rank_sum, i = 0.0, 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        average_rank = (i + j + 1) / 2  # ranks i+1 .. j, tied
        rank_sum += average_rank * sum(1 for k in range(i, j) if ranked[k][1] == 0)
        i = j
    n, m = len(slower), len(faster)
    return (rank_sum - n * (n + 1) / 2) / (n * m)


def quartiles(samples: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(samples, n=4)
    return q1, q2, q3


async def measure(args: argparse.Namespace, url: str) -> None:
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        database_url=url,
        redis_url=None,
        rate_limit_standard="1000000000/hour",
        log_level="WARNING",
    )
    await asyncio.to_thread(upgrade, settings)
    app = create_app(settings)
    async with LifespanManager(app):
        db: Database = app.state.db
        async with db.transaction() as session:
            victim = await create_key(session, account_name="victim")
            prober = await create_key(session, account_name="prober")
        started = time.perf_counter()
        await load(db, victim.account_id, victim_names(args.victim_rows, args.hits))
        await load(db, prober.account_id, [f"own-{i}.test" for i in range(args.prober_rows)])
        print(
            f"loaded {args.victim_rows} victim domains ({args.hits} containing {SECRET!r}) and "
            f"{args.prober_rows} prober domains in {time.perf_counter() - started:.1f} s"
        )
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {prober.key}"}
        samples: dict[str, list[float]] = {SECRET: [], ABSENT: [], ABSENT_TOO: []}
        rng = random.Random(args.seed)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for round_number in range(args.warmup + args.rounds):
                terms = list(samples)
                rng.shuffle(terms)
                for term in terms:
                    begun = time.perf_counter()
                    response = await client.get(
                        "/api/v1/domains", params={"search": term}, headers=headers
                    )
                    elapsed = (time.perf_counter() - begun) * 1000
                    if response.status_code != 200 or response.json()["meta"]["total"] != 0:
                        raise SystemExit(
                            f"unexpected answer: {response.status_code} {response.text}"
                        )
                    if round_number >= args.warmup:
                        samples[term].append(elapsed)
    for term, values in samples.items():
        q1, q2, q3 = quartiles(values)
        owner = "the victim's" if term == SECRET else "no one's"
        print(f"search={term} ({owner:<12}) median {q2:6.3f} ms   middle 50 % {q1:6.3f}-{q3:6.3f}")
    signal = statistics.median(samples[SECRET]) - statistics.median(samples[ABSENT])
    noise = statistics.median(samples[ABSENT_TOO]) - statistics.median(samples[ABSENT])
    print(
        f"signal      {SECRET} - {ABSENT}: {signal * 1000:+7.1f} µs   "
        f"P(slower) {superiority(samples[SECRET], samples[ABSENT]):.2f}"
    )
    print(
        f"noise floor {ABSENT_TOO} - {ABSENT}: {noise * 1000:+7.1f} µs   "
        f"P(slower) {superiority(samples[ABSENT_TOO], samples[ABSENT]):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", help="PostgreSQL: a fresh database is made beside it")
    parser.add_argument("--victim-rows", type=int, default=50_000)
    parser.add_argument("--hits", type=int, default=1_500, help="victim names holding the term")
    parser.add_argument("--prober-rows", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1_500, help="timed searches per term")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()

    import atrium

    print(f"atrium from {Path(atrium.__file__).parent}")
    print(
        f"calibration: sum(range(10**6)) {calibration_ms():.1f} ms of CPU; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.database_url and make_url(args.database_url).get_backend_name() == "postgresql":
        url = asyncio.run(fresh_postgres(args.database_url))
        try:
            asyncio.run(measure(args, url))
        finally:
            asyncio.run(drop_postgres(url))
    else:
        with tempfile.TemporaryDirectory(prefix="atrium-isolation-") as workdir:
            asyncio.run(measure(args, args.database_url or f"sqlite+aiosqlite:///{workdir}/b.db"))
    print(f"calibration after: {calibration_ms():.1f} ms; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
