"""Memory at scale (issue 39 item 6): N items in one account, then through a real
`atrium serve` over loopback HTTP: put (new items), text search, and search by meaning from
the process's vectors (docs/decisions/0065) and, with the vector cache off, from the scan.

Seeding is not measured and does not go through the API: the items are inserted with bulk
SQL (sqlite3 executemany / asyncpg COPY; SQLite's FTS5 triggers and PostgreSQL's GIN index
are kept by the database as for any insert), each with 10 words drawn from a vocabulary of
20,000 made-up words as its text and a random unit vector of 384 float32 from numpy as its
embedding (stored as the offline embedder's, which embeds the queries). Puts made during the
bench go through the API and the offline embedder.

    .venv/bin/python bench/memory_bench.py --db sqlite --items 100000 --queries 200
    .venv/bin/python bench/memory_bench.py --db postgres --items 1000000 --cache-mb 2048

Every figure is printed beside the calibration (CPU time of sum(range(10**6))) measured in
the same minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from harness import (
    ATRIUM,
    Meter,
    atrium_env,
    calibration_ms,
    free_port,
    migrate_and_key,
    percentile,
    postgres_admin,
    sqlite_env,
    stop,
    wait_until_healthy,
)

DIMS = 384
VOCABULARY = 20_000
WORDS_PER_ITEM = 10
NAMESPACES = 100
BATCH = 20_000
ITEMS = "/v1/memory/items"
SEARCH = "/v1/memory/search"


def _words(seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    made: set[str] = set()
    while len(made) < VOCABULARY:
        made.add("".join(rng.choice(letters) for _ in range(rng.randint(5, 9))))
    return sorted(made)


WORDS = _words(39)


def _rows(count: int, start: int) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of (id, namespace JSON, path, key, value JSON, search text, vector bytes)."""
    rng = np.random.default_rng(start)
    pick = random.Random(start)
    for first in range(start, start + count, BATCH):
        size = min(BATCH, start + count - first)
        vectors = rng.standard_normal((size, DIMS), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        batch = []
        for offset in range(size):
            index = first + offset
            group = f"g{index % NAMESPACES}"
            text = " ".join(pick.choices(WORDS, k=WORDS_PER_ITEM))
            batch.append(
                (
                    f"mem_seed{index:010d}",
                    json.dumps(["bench", group]),
                    f"bench/{group}/",
                    f"k{index}",
                    json.dumps({"text": text}),
                    text,
                    vectors[offset].tobytes(),
                )
            )
        yield batch


def _seed_sqlite(path: Path, account_id: int, count: int) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    for batch in _rows(count, 0):
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO memory_items (id, account_id, namespace, namespace_path, key, value, "
            "search_text, created_at, updated_at, embedding, embedding_model) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'offline')",
            [(r[0], account_id, r[1], r[2], r[3], r[4], r[5], stamp, stamp, r[6]) for r in batch],
        )
        connection.execute("COMMIT")
    connection.execute("ANALYZE")
    connection.close()


async def _seed_postgres(url: str, account_id: int, count: int) -> None:
    import asyncpg  # type: ignore[import-untyped]

    now = datetime.now(UTC)
    conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    try:
        for batch in _rows(count, 0):
            await conn.copy_records_to_table(
                "memory_items",
                columns=[
                    "id",
                    "account_id",
                    "namespace",
                    "namespace_path",
                    "key",
                    "value",
                    "search_text",
                    "created_at",
                    "updated_at",
                    "embedding",
                    "embedding_model",
                ],
                records=[
                    (r[0], account_id, r[1], r[2], r[3], r[4], r[5], now, now, r[6], "offline")
                    for r in batch
                ],
            )
        await conn.execute("VACUUM ANALYZE memory_items")
    finally:
        await conn.close()


def _account_id(env: dict[str, str], url: str) -> int:
    if url.startswith("sqlite"):
        with sqlite3.connect(url.split("///", 1)[1]) as connection:
            row = connection.execute("SELECT id FROM accounts WHERE name='bench'").fetchone()
            return int(row[0])

    async def read() -> int:
        import asyncpg

        conn = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
        try:
            return int(await conn.fetchval("SELECT id FROM accounts WHERE name='bench'"))
        finally:
            await conn.close()

    return asyncio.run(read())


def _serve(env: dict[str, str], workdir: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**env, "ATRIUM_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [ATRIUM, "serve", "--no-worker", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(process, url, log)
    return process, url


def _figure(name: str, took: list[float], note: str = "") -> None:
    cal = calibration_ms()
    print(
        f"{name}: p50 {percentile(took, 0.5):.1f} ms, p99 {percentile(took, 0.99):.1f} ms, "
        f"max {max(took):.1f} ms (n={len(took)}){note} | cal {cal:.1f} ms",
        flush=True,
    )


async def _timed(http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = await http.request(method, path, json=body)
    took = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{method} {path}: {response.status_code} {response.text}")
    return took


def _query(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.choice((1, 2))))


async def _measure(url: str, key: str, args: argparse.Namespace, *, scan_only: bool) -> None:
    rng = random.Random(7)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=600) as http:
        semantic = {"mode": "semantic", "limit": 10}
        if scan_only:
            took = [
                await _timed(http, "POST", SEARCH, {**semantic, "query": _query(rng)})
                for _ in range(args.scan_queries)
            ]
            _figure("semantic search, scan (cache off)", took)
            return
        took = [
            await _timed(
                http,
                "PUT",
                ITEMS,
                {
                    "namespace": ["bench", "put"],
                    "key": f"new{index}-{secrets.token_hex(3)}",
                    "value": {"text": _query(rng) + " " + _query(rng)},
                },
            )
            for index in range(args.puts)
        ]
        _figure("put (new item)", took)
        took = [
            await _timed(http, "POST", SEARCH, {"query": _query(rng), "limit": 10})
            for _ in range(args.queries)
        ]
        _figure("text search (1 or 2 words, limit 10)", took)
        first = await _timed(http, "POST", SEARCH, {**semantic, "query": _query(rng)})
        print(
            f"semantic search, first (loads the account's vectors): {first:.0f} ms"
            f" | cal {calibration_ms():.1f} ms",
            flush=True,
        )
        took = [
            await _timed(http, "POST", SEARCH, {**semantic, "query": _query(rng)})
            for _ in range(args.queries)
        ]
        _figure("semantic search (in-memory vectors)", took)
        prefixed = {**semantic, "namespace_prefix": ["bench", "g7"]}
        took = [
            await _timed(http, "POST", SEARCH, {**prefixed, "query": _query(rng)})
            for _ in range(args.queries)
        ]
        _figure("semantic search, namespace prefix (1 of 100)", took)
        mixed: list[float] = []
        for index in range(args.queries // 2):
            await _timed(
                http,
                "PUT",
                ITEMS,
                {"namespace": ["bench", "mix"], "key": f"m{index}", "value": _query(rng)},
            )
            mixed.append(await _timed(http, "POST", SEARCH, {**semantic, "query": _query(rng)}))
        _figure("semantic search after a put (catches up one change)", mixed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--puts", type=int, default=200)
    parser.add_argument("--scan-queries", type=int, default=10)
    parser.add_argument("--cache-mb", type=int, default=512, help="ATRIUM_MEMORY_VECTOR_CACHE_MB")
    parser.add_argument("--postgres", default="postgresql+asyncpg://postgres@127.0.0.1:5432")
    args = parser.parse_args()

    settings = {
        "run_worker": "false",
        "embeddings_model": "offline",
        "rate_limit_premium": "1000000/hour",
        "memory_vector_cache_mb": str(args.cache_mb),
    }
    workdir, _, env = sqlite_env("atrium-memory-bench-", settings)
    name = f"atrium_bench_{secrets.token_hex(4)}"
    if args.db == "postgres":
        asyncio.run(postgres_admin(args.postgres, f'CREATE DATABASE "{name}"'))
        env = atrium_env(
            **{k: v for k, v in env.items() if k.startswith("ATRIUM_")},
        )
        env["ATRIUM_DATABASE_URL"] = f"{args.postgres}/{name}"
    url = env["ATRIUM_DATABASE_URL"]
    try:
        key = migrate_and_key(env)
        account = _account_id(env, url)
        started = time.perf_counter()
        if args.db == "sqlite":
            _seed_sqlite(workdir / "atrium.db", account, args.items)
        else:
            asyncio.run(_seed_postgres(url, account, args.items))
        print(
            f"{args.db}: {args.items:,} items seeded in one account by bulk SQL (vectors: numpy "
            f"random unit vectors, {DIMS} float32; texts: {WORDS_PER_ITEM} of {VOCABULARY:,} "
            f"made-up words) in {time.perf_counter() - started:.0f} s, not measured",
            flush=True,
        )
        process, base = _serve(env, workdir, "server")
        try:
            meter = Meter(process.pid)
            rss = meter.rss_mb()
            asyncio.run(_measure(base, key, args, scan_only=False))
            print(
                f"server RSS: {rss:.0f} MB before, {meter.rss_mb():.0f} MB after "
                f"(ATRIUM_MEMORY_VECTOR_CACHE_MB={args.cache_mb}) | cal {calibration_ms():.1f} ms",
                flush=True,
            )
        finally:
            stop(process)
        if args.scan_queries:
            process, base = _serve(
                {**env, "ATRIUM_MEMORY_VECTOR_CACHE_MB": "0"}, workdir, "server-scan"
            )
            try:
                meter = Meter(process.pid)
                asyncio.run(_measure(base, key, args, scan_only=True))
                print(
                    f"server peak RSS while scanning: {meter.peak_rss_mb():.0f} MB"
                    f" | cal {calibration_ms():.1f} ms",
                    flush=True,
                )
            finally:
                stop(process)
    finally:
        if args.db == "postgres":
            asyncio.run(
                postgres_admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            )


if __name__ == "__main__":
    main()
