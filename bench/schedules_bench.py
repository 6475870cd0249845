"""What the firing loop costs its process: the CPU of one look with nothing due (every process
that executes runs makes one each ATRIUM_SCHEDULE_POLL_SECONDS), and per fire time fired (its
schedule's row locked, the firing recorded, its run and thread inserted, next_fire_at moved).

In process, on a SQLite file: an app without a worker (runs stay queued), `--schedules`
schedules every minute made over HTTP, then the loop's `Scheduler.tick` at times the bench
sets: an idle look, then a look one minute on (one fire time per schedule), round after round.

    .venv/bin/python bench/schedules_bench.py --schedules 200 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx
from asgi_lifespan import LifespanManager
from harness import calibration_ms

from atrium.app import create_app
from atrium.auth.service import create_key
from atrium.db.migrate import upgrade
from atrium.schedules.scheduler import Scheduler
from atrium.settings import Settings

T0 = datetime.fromisoformat("2026-01-05T08:00:30+00:00")


async def main(schedules: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        clock = Path(tmp) / "clock.txt"
        clock.write_text(T0.isoformat())
        settings = Settings(
            _env_file=None,
            database_url=f"sqlite+aiosqlite:///{tmp}/bench.db",
            run_worker=False,
            schedule_clock_file=str(clock),
            schedule_max_per_account=schedules,
            rate_limit_standard="1000000/hour",
        )
        await asyncio.to_thread(upgrade, settings)
        app = create_app(settings)
        async with LifespanManager(app):
            async with app.state.db.transaction() as session:
                key = (await create_key(session, account_name="bench")).key
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(
                transport=transport,
                base_url="http://bench",
                headers={"Authorization": f"Bearer {key}"},
            ) as http:
                for number in range(schedules):
                    response = await http.post(
                        "/v1/schedules",
                        json={"prompt": f"p{number}", "cron": "* * * * *", "on_overlap": "enqueue"},
                    )
                    assert response.status_code == 201, response.text
            scheduler = Scheduler(settings=settings, db=app.state.db, broker=app.state.broker)
            idle: list[float] = []
            fired: list[float] = []
            for number in range(rounds):
                moment = T0 + timedelta(minutes=number)
                started = time.process_time()
                assert await scheduler.tick(moment) == 0
                idle.append((time.process_time() - started) * 1000)
                started = time.process_time()
                looked = await scheduler.tick(moment + timedelta(minutes=1))
                while looked:
                    looked = await scheduler.tick(moment + timedelta(minutes=1))
                fired.append((time.process_time() - started) * 1000 / schedules)
    print(f"calibration: sum(range(10**6)) = {calibration_ms():.1f} ms of CPU")
    print(f"idle look ({schedules} schedules, none due): median {statistics.median(idle):.2f} ms")
    print(
        f"per fire time fired: median {statistics.median(fired):.2f} ms (rounds: "
        + ", ".join(f"{value:.2f}" for value in fired)
        + ")"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--schedules", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.schedules, arguments.rounds))
