"""The write batcher inserts a batch's event rows together at its end: one executemany in
submission order, and a failing operation's rows fail that operation alone."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import RunEvent
from atrium.kit.time import utcnow
from atrium.runs import events
from atrium.runs.events import event_store
from tests.runs.helpers import create_run, wait_finished
from tests.statements import recorded


def inserting(run_id: str, *seqs: int) -> Any:
    rows = [
        events.event_row(run_id, seq, "message.delta", {"text": str(seq)}, utcnow()) for seq in seqs
    ]

    def operation(session: Session) -> int:
        event_store.insert_events(session, rows)
        return len(rows)

    return operation


async def test_a_batch_inserts_its_events_in_one_statement_in_order(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, batcher: WriteBatcher
) -> None:
    run_id = (await create_run(client, auth))["run_id"]
    await wait_finished(client, auth, run_id)
    with recorded() as seen:
        # Queued before the batcher's task runs: one batch, one transaction.
        written = [batcher.submit_sync(inserting(run_id, *seqs)) for seqs in ((101,), (102, 103))]
        assert await asyncio.gather(*written) == [1, 2]
    inserts = [s.many for s in seen if s.sql.startswith("INSERT INTO run_events")]
    assert inserts == [True]
    async with db.session(write=False) as session:
        stored = await session.execute(
            select(RunEvent.seq, RunEvent.data).where(RunEvent.run_id == run_id, RunEvent.seq > 100)
        )
        rows = sorted(stored.all())
    assert rows == [(101, {"text": "101"}), (102, {"text": "102"}), (103, {"text": "103"})]


async def test_a_failing_operations_rows_fail_it_alone(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, batcher: WriteBatcher
) -> None:
    run_id = (await create_run(client, auth))["run_id"]
    await wait_finished(client, auth, run_id)
    written = [
        batcher.submit_sync(inserting(run_id, 201)),
        batcher.submit_sync(inserting(run_id, 201, 202)),  # 201 again: the unique (run, seq)
        batcher.submit_sync(inserting(run_id, 203)),
    ]
    first, failed, last = await asyncio.gather(*written, return_exceptions=True)
    assert (first, last) == (1, 1)
    assert isinstance(failed, IntegrityError)
    async with db.session(write=False) as session:
        seqs = await session.scalars(
            select(RunEvent.seq).where(RunEvent.run_id == run_id, RunEvent.seq > 200)
        )
        assert sorted(seqs) == [201, 203]
