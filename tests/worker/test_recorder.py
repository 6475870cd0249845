"""The recorder's flushes without a task or lock each: one write in flight at a time, events
put back when a write fails and written (and published) before later ones, nothing lost on
close. The write batcher is replaced by one whose writes the test completes by hand."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, cast

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.runs.events.broker import Broker
from atrium.runs.lifecycle import ClaimedRun
from atrium.settings import Settings
from atrium.worker.recorder import RunRecorder


class HeldWrites:
    """A batcher whose queued writes wait until the test answers them, in order."""

    def __init__(self) -> None:
        self.queued: list[asyncio.Future[Any]] = []

    def submit_sync(self, _operation: object) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.queued.append(future)
        return future


class Published(Broker):
    def __init__(self) -> None:
        super().__init__()
        self.seqs: list[int] = []

    def publish_events(self, run_id: str, messages: list[dict[str, Any]]) -> None:
        self.seqs.extend(int(message["id"]) for message in messages)


def recorder(writes: HeldWrites, broker: Published) -> RunRecorder:
    claim = ClaimedRun(
        run_id="run_1",
        account_id=1,
        thread_id="thr_1",
        agent_id="agt_1",
        model="atrium:offline",
        prompt="hi",
        config={},
        attempt=1,
        last_event_seq=2,
        created_at=datetime.now(UTC),
        cancel_requested=False,
        started_events=[],
    )
    return RunRecorder(
        db=cast(Database, None),
        batcher=cast(WriteBatcher, writes),
        broker=broker,
        settings=Settings(_env_file=None, run_event_flush_ms=1),  # type: ignore[call-arg]
        claim=claim,
        owner="worker-1",
    )


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.005)


async def test_one_flush_in_flight_and_a_failed_one_is_retried_first() -> None:
    writes, broker = HeldWrites(), Published()
    run = recorder(writes, broker)

    run.emit("message.delta", {"text": "a"})  # seq 3
    await settle()
    assert len(writes.queued) == 1  # its timer fired: the first flush is in flight

    run.emit("message.delta", {"text": "b"})  # seq 4, while the first is in flight
    await settle()
    assert len(writes.queued) == 1  # waits for the first: never two writes at once

    writes.queued[0].set_exception(RuntimeError("database is locked"))
    await settle()
    # The failed events were put back before the later one, and written together with it.
    assert len(writes.queued) == 2
    assert broker.seqs == []

    writes.queued[1].set_result(False)  # held, no cancel requested
    await settle()
    assert broker.seqs == [3, 4]
    assert not run.lost and not run.cancel_requested


async def test_events_that_waited_for_a_flush_go_right_after_it() -> None:
    writes, broker = HeldWrites(), Published()
    run = recorder(writes, broker)
    run.emit("message.delta", {"text": "a"})
    await settle()
    run.emit("message.delta", {"text": "b"})
    await settle()  # its timer fired while the first write was in flight

    writes.queued[0].set_result(True)  # written; a cancel was requested meanwhile
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert len(writes.queued) == 2  # no second timer wait
    assert run.cancel_requested
    writes.queued[1].set_result(None)  # the lease was lost
    await settle()
    assert run.lost
    assert broker.seqs == [3]  # nothing written under a lost lease is published


async def test_close_waits_for_the_flush_in_flight() -> None:
    writes, broker = HeldWrites(), Published()
    run = recorder(writes, broker)
    run.emit("message.delta", {"text": "a"})
    await settle()
    closing = asyncio.create_task(run.close())
    await settle()
    assert not closing.done()
    writes.queued[0].set_result(False)
    await asyncio.wait_for(closing, 1)
    assert broker.seqs == [3]
