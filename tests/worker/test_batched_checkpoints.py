"""The checkpoints one after the other in a write batch are one UPDATE of all their runs, with
what each would say alone: the cancel flag of its run, or None (and none of its events
written) when its lease is lost; a write between them keeps its place, and a failing one fails
alone."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import Run, RunEvent, RunStatus
from atrium.kit.time import utcnow
from atrium.runs import events, lifecycle
from atrium.runs.lifecycle import ClaimedRun, Ending, Usage, run_queue
from tests.runs.helpers import RUNS, create_run
from tests.statements import Statement, recorded

OWNER = "host:1234:abcd"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"run_worker": False}  # this test is the worker


@pytest.fixture
def executed() -> Iterator[list[Statement]]:
    with recorded() as seen:
        yield seen


def run_updates(seen: list[Statement]) -> list[str]:
    """The UPDATE statements of runs among `seen`."""
    return [s.sql for s in seen if s.sql.lstrip().startswith(("UPDATE runs", "WITH held"))]


async def claimed(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, count: int = 3
) -> list[ClaimedRun]:
    """`count` runs claimed by OWNER, in the order they were created."""
    for index in range(count):
        await create_run(client, auth, f"{index:02d}")
    runs = await db.write_sync(
        lambda session: lifecycle.claim(
            session, owner=OWNER, limit=count, lease_seconds=30, lock_rows=not db.sqlite
        )
    )
    assert len(runs) == count
    return sorted(runs, key=lambda run: run.prompt)


def checkpoint(run: ClaimedRun, *seqs: int, attempt: int | None = None) -> Any:
    rows = [
        events.event_row(run.run_id, seq, "message.delta", {"text": str(seq)}, utcnow())
        for seq in seqs
    ]
    return run_queue.Checkpoint(
        run_id=run.run_id,
        owner=OWNER,
        attempt=run.attempt if attempt is None else attempt,
        last_event_seq=seqs[-1],
        lease_seconds=30,
        event_rows=rows,
    )


async def stored(db: Database, run: ClaimedRun) -> tuple[int, list[int]]:
    """The run's last event seq and the seqs of its events past its claim."""
    async with db.session(write=False) as session:
        last = await session.scalar(select(Run.last_event_seq).where(Run.id == run.run_id))
        seqs = await session.scalars(
            select(RunEvent.seq).where(RunEvent.run_id == run.run_id, RunEvent.seq > 100)
        )
        assert last is not None
        return last, sorted(seqs)


async def test_a_batchs_checkpoints_are_one_update_with_each_runs_answer(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    batcher: WriteBatcher,
    executed: list[Statement],
) -> None:
    one, two, three = await claimed(client, auth, db)
    cancelled = await client.post(f"{RUNS}/{two.run_id}/cancel", headers=auth)
    assert cancelled.status_code == 200, cancelled.text
    executed.clear()
    # Queued before the batcher's task runs: one batch, one transaction.
    written = [
        batcher.submit_sync(checkpoint(one, 101, 102)),
        batcher.submit_sync(checkpoint(two, 101)),
        batcher.submit_sync(checkpoint(three, 101, attempt=three.attempt + 1)),  # not held
    ]
    assert await asyncio.gather(*written) == [False, True, None]
    assert len(run_updates(executed)) == 1
    assert await stored(db, one) == (102, [101, 102])
    assert await stored(db, two) == (101, [101])
    assert await stored(db, three) == (three.last_event_seq, [])  # nothing written


async def test_a_write_between_checkpoints_keeps_its_place(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, batcher: WriteBatcher
) -> None:
    one, two, _three = await claimed(client, auth, db)
    ending = Ending(RunStatus.COMPLETED, usage=Usage(), result="done")
    terminal = [events.event_row(one.run_id, 103, *ending.event(), utcnow())]
    # The run's last flush, then its end (the recorder queues them so), then another run's.
    written = [
        batcher.submit_sync(checkpoint(one, 101, 102)),
        batcher.submit_sync(
            lambda session: lifecycle.finish(
                session, run=one, owner=OWNER, ending=ending, rows=terminal, now=utcnow()
            )
        ),
        batcher.submit_sync(checkpoint(two, 101)),
    ]
    flushed, finished, other = await asyncio.gather(*written)
    assert (flushed, other) == (False, False)
    assert finished is not None
    assert await stored(db, one) == (103, [101, 102, 103])
    assert await stored(db, two) == (101, [101])


async def test_a_failing_checkpoint_fails_alone(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, batcher: WriteBatcher
) -> None:
    one, two, three = await claimed(client, auth, db)
    assert await batcher.write_sync(checkpoint(two, 101)) is False
    written = [
        batcher.submit_sync(checkpoint(one, 101)),
        batcher.submit_sync(checkpoint(two, 101, 102)),  # 101 again: the unique (run, seq)
        batcher.submit_sync(checkpoint(three, 101)),
    ]
    first, failed, last = await asyncio.gather(*written, return_exceptions=True)
    assert (first, last) == (False, False)
    assert isinstance(failed, IntegrityError)
    assert await stored(db, one) == (101, [101])
    assert await stored(db, two) == (101, [101])  # its failed checkpoint left nothing
    assert await stored(db, three) == (101, [101])


async def test_a_run_twice_in_one_batch_is_checkpointed_in_order(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    batcher: WriteBatcher,
    executed: list[Statement],
) -> None:
    one, two, _three = await claimed(client, auth, db)
    executed.clear()
    written = [
        batcher.submit_sync(checkpoint(one, 101)),
        batcher.submit_sync(checkpoint(two, 101)),
        batcher.submit_sync(checkpoint(one, 102, 103)),
    ]
    assert await asyncio.gather(*written) == [False, False, False]
    assert len(run_updates(executed)) == 2  # (one, two), then one again
    assert await stored(db, one) == (103, [101, 102, 103])
    assert await stored(db, two) == (101, [101])


@pytest.mark.parametrize(("count", "statements"), [(11, 1), (34, 2)])
async def test_many_checkpoints_are_few_updates(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    batcher: WriteBatcher,
    executed: list[Statement],
    count: int,
    statements: int,
) -> None:
    # Past 8 runs, a statement's size is rounded up to 16 or 32 (NULL rows fill it); past 32,
    # another statement takes the rest.
    runs = await claimed(client, auth, db, count=count)
    executed.clear()
    written = [batcher.submit_sync(checkpoint(run, 101)) for run in runs[:-1]]
    written.append(batcher.submit_sync(checkpoint(runs[-1], 101, attempt=runs[-1].attempt + 1)))
    assert await asyncio.gather(*written) == [False] * (count - 1) + [None]
    assert len(run_updates(executed)) == statements
    for run in runs[:-1]:
        assert await stored(db, run) == (101, [101])
    assert await stored(db, runs[-1]) == (runs[-1].last_event_seq, [])
