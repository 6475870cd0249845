"""`wait_event`: set, timed out, and cancelled as the event fires (the case wait_for loses)."""

from __future__ import annotations

import asyncio

import pytest

from atrium.kit.wait_event import wait_event


async def test_returns_true_once_set_and_false_after_the_timeout() -> None:
    event = asyncio.Event()
    asyncio.get_running_loop().call_later(0.01, event.set)
    assert await wait_event(event, 5) is True
    event.clear()
    assert await wait_event(event, 0.01) is False


@pytest.mark.parametrize("yields", [0, 1, 2, 3])
async def test_a_loop_cancelled_as_its_event_fires_stops(yields: int) -> None:
    """Like a background loop's stop: something sets the wake-up event, then the loop is
    cancelled. With Python 3.11's wait_for the cancellation is lost for 0-2 yields between
    the two and the loop never ends."""
    event = asyncio.Event()

    async def background_loop() -> None:
        while True:
            event.clear()
            await wait_event(event, 10)

    task = asyncio.create_task(background_loop())
    await asyncio.sleep(0.01)  # the loop waits
    event.set()
    for _ in range(yields):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=1)
    assert done == {task} and task.cancelled()
