"""Memory of a run given a large text file: the peak resident size (VmHWM) of a real
`atrium serve` (API and worker, SQLite) over one run given a text file of --size-mb that
calls `read_file` half-way into it (the offline model, an agent without tools).

The file is uploaded, then the server is restarted, so the upload's own peak (the database
store holds a file whole to insert it) is not counted; a run given a 2 MiB file warms the
process up before the measured run.

With --postgres (a server URL without a database name) the server runs on a fresh PostgreSQL
database instead, and the run's time and the CPU of the PostgreSQL server over it are printed
too (its postmaster and backends, from the kernel's counters: run it on a quiet server).

    .venv/bin/python bench/input_file_memory_bench.py --store disk --size-mb 100
    .venv/bin/python bench/input_file_memory_bench.py --store database --size-mb 19
    .venv/bin/python bench/input_file_memory_bench.py --store database --size-mb 19 \
        --postgres postgresql+asyncpg://postgres@127.0.0.1:5432

Printed beside the calibration (CPU time of sum(range(10**6))) measured in the same minute.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from harness import (
    ATRIUM,
    Meter,
    calibration_ms,
    migrate_and_key,
    named_pids,
    postgres_admin,
    sqlite_env,
    stop,
    wait_until_healthy,
)

MB = 1_048_576
BOUNDARY = "bench-boundary"
LINE = b"0123456789abcdef" * 4095 + b"0123456789abcde\n"  # 65,536 bytes
TERMINAL = {"completed", "failed", "cancelled"}


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM in /proc")


def body(size: int) -> Iterator[bytes]:
    """A multipart body of one text file of `size` bytes, a line at a time."""
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    for _ in range(size // len(LINE)):
        yield LINE
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def upload(http: httpx.Client, size: int) -> str:
    made = http.post(
        "/api/v1/public/files",
        content=body(size),
        headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    if made.status_code != 201:
        raise SystemExit(f"upload refused: {made.text}")
    file_id: str = made.json()["file_id"]
    return file_id


def run(http: httpx.Client, agent_id: str, file_id: str, offset: int) -> dict[str, Any]:
    """A run given the file that reads a page at `offset`, once it has finished."""
    made = http.post(
        "/api/v1/public/agent/runs",
        json={
            "prompt": f'call read_file {{"file_id": "{file_id}", "offset": {offset}}}',
            "agent_id": agent_id,
            "input": [{"type": "file", "file_id": file_id}],
        },
    )
    if made.status_code != 201:
        raise SystemExit(f"run refused: {made.text}")
    while True:
        found: dict[str, Any] = http.get(
            f"/api/v1/public/agent/runs/{made.json()['run_id']}"
        ).json()
        if found["status"] in TERMINAL:
            if found["status"] != "completed" or "read_file returned: 0123" not in found["result"]:
                raise SystemExit(f"run did not read the file: {found}")
            return found
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=["disk", "database"], default="disk")
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--postgres", help="a PostgreSQL server URL, without a database name")
    args = parser.parse_args()
    size = args.size_mb * MB
    workdir, port, env = sqlite_env(
        "atrium-input-file-",
        {
            "file_storage": args.store,
            "file_max_bytes": str(size + MB),
        },
    )
    env["ATRIUM_FILE_DIR"] = str(workdir / "files")
    database = f"atrium_bench_{secrets.token_hex(4)}"
    if args.postgres:
        asyncio.run(postgres_admin(args.postgres, f'CREATE DATABASE "{database}"'))
        env["ATRIUM_DATABASE_URL"] = f"{args.postgres}/{database}"
    try:
        measure(args, size, workdir, port, env)
    finally:
        if args.postgres:
            drop = f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'
            asyncio.run(postgres_admin(args.postgres, drop))


def measure(
    args: argparse.Namespace, size: int, workdir: Path, port: int, env: dict[str, str]
) -> None:
    key = migrate_and_key(env)
    url = f"http://127.0.0.1:{port}"
    log_path = workdir / "server.log"

    def serve() -> subprocess.Popen[bytes]:
        with log_path.open("a") as log:
            process = subprocess.Popen(
                [ATRIUM, "serve", "--port", str(port)], env=env, stdout=log, stderr=log
            )
        wait_until_healthy(process, url, log_path)
        return process

    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=300) as http:
        process = serve()
        try:
            made = http.post("/v1/agents", json={"name": "reader", "config": {"tools": []}})
            agent_id = made.json()["agent_id"]
            small, large = upload(http, 2 * MB), upload(http, size)
        finally:
            stop(process)
        process = serve()
        postgres = [Meter(pid) for pid in named_pids("postgres")] if args.postgres else []
        try:
            run(http, agent_id, small, MB)
            before = peak_rss(process.pid)
            database_cpu = sum(meter.cpu_seconds() for meter in postgres)
            started = time.perf_counter()
            run(http, agent_id, large, size // 2)
            took = time.perf_counter() - started
            database_cpu = sum(meter.cpu_seconds() for meter in postgres) - database_cpu
            after = peak_rss(process.pid)
        finally:
            stop(process)
    on = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"{args.store} store on {on}, {args.size_mb} MiB text file, read_file at "
        f"{args.size_mb // 2} MiB: peak RSS {before / MB:.1f} MB before the run, "
        f"{after / MB:.1f} MB after (+{(after - before) / MB:.1f} MB); the run {took:.2f} s"
        + (f", PostgreSQL CPU {database_cpu * 1000:.0f} ms" if args.postgres else "")
        + f"; calibration {calibration_ms():.1f} ms"
    )


if __name__ == "__main__":
    main()
