"""A maintenance loop outlives a failed round and stops when told."""

from __future__ import annotations

import asyncio
import logging

import pytest

from atrium.kit.repeating import Repeating


async def test_a_failed_round_is_logged_and_the_next_one_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rounds: list[int] = []
    third = asyncio.Event()

    async def work() -> None:
        rounds.append(len(rounds))
        if len(rounds) == 1:
            raise RuntimeError("the database is away")
        if len(rounds) == 3:
            third.set()

    loop = Repeating(
        "test-loop", work, seconds=lambda: 0.01, log=logging.getLogger("t"), failure="it failed"
    )
    loop.start()
    await asyncio.wait_for(third.wait(), timeout=5)
    await loop.stop()
    ran = len(rounds)
    await asyncio.sleep(0.05)
    assert len(rounds) == ran  # stopped: no round after
    assert [record.getMessage() for record in caplog.records] == ["it failed"]
    assert caplog.records[0].exc_info is not None
    await loop.stop()  # stopping twice is no error


async def test_stop_lets_a_round_in_progress_finish_and_ends_the_wait_at_once() -> None:
    """A round cut off while opening its database connection left that connection checked out
    for good (the process's other writes then waited out their timeout at shutdown)."""
    started = asyncio.Event()
    finished: list[bool] = []

    async def work() -> None:
        started.set()
        await asyncio.sleep(0.2)
        finished.append(True)

    loop = Repeating(
        "test-loop", work, seconds=lambda: 3600, log=logging.getLogger("t"), failure="failed"
    )
    loop.start()
    await asyncio.wait_for(started.wait(), timeout=5)
    await loop.stop()
    assert finished == [True]

    loop.start()  # now stopped in its hour-long wait: at once
    await asyncio.sleep(0.3)
    begun = asyncio.get_running_loop().time()
    await loop.stop()
    assert asyncio.get_running_loop().time() - begun < 1
    assert finished == [True, True]


async def test_wait_first_runs_the_first_round_after_the_interval() -> None:
    rounds: list[float] = []

    async def work() -> None:
        rounds.append(asyncio.get_running_loop().time())

    loop = Repeating(
        "test-loop",
        work,
        seconds=lambda: 0.3,
        log=logging.getLogger("t"),
        failure="failed",
        wait_first=True,
    )
    begun = asyncio.get_running_loop().time()
    loop.start()
    await asyncio.sleep(0.1)
    assert rounds == []
    await asyncio.sleep(0.4)
    await loop.stop()
    assert len(rounds) == 1 and rounds[0] - begun >= 0.3
