"""Waiting on an event with a timeout, without losing a cancellation.

Python 3.11's `asyncio.wait_for` returns normally when the task is cancelled just as the awaited
event fires (its inner future is done, so it hands back the result and drops the
cancellation). A background loop that waits like that can miss the `cancel()` of its stop and
run on forever; it happened to the webhook sender's loop, whose in-flight deliveries set the
loop's wake-up event as the stop cancels them. `asyncio.timeout` awaits the event directly, so
a cancellation always reaches the task.
"""

from __future__ import annotations

import asyncio


async def wait_event(event: asyncio.Event, seconds: float) -> bool:
    """Wait until `event` is set or `seconds` pass; True if it was set."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True
