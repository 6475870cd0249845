"""A round of work repeated on the process's event loop until stopped (the maintenance loops:
retention, the file sweep, the memory purge)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from atrium.kit.wait_event import wait_event

# How long `stop` lets a round in progress finish before cancelling it.
STOP_GRACE_SECONDS: Final = 10.0


class Repeating:
    """Run `work` now (or, with `wait_first`, after `seconds()`) and then every `seconds()`
    (read each time: a setting) until `stop`.
    A round of it that raises is logged as `failure` and the next one tries again: these loops
    catch up by design, and one bad round must not end them for the life of the process.

    `stop` ends the wait between rounds at once but lets a round in progress finish (up to
    `STOP_GRACE_SECONDS`): a round cancelled while its database connection is being opened
    leaves that connection checked out of the pool for good, and on SQLite the pool's one write
    connection is every writer's turn, so the process's other writes would wait out their
    timeout at shutdown."""

    def __init__(
        self,
        name: str,
        work: Callable[[], Awaitable[Any]],
        *,
        seconds: Callable[[], float],
        log: logging.Logger,
        failure: str,
        wait_first: bool = False,
    ) -> None:
        self.name = name
        self._wait_first = wait_first
        self._work = work
        self._seconds = seconds
        self._log = log
        self._failure = failure
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    def start(self) -> None:
        self._stopping = asyncio.Event()
        self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        task = self._task
        if task is None:
            return
        self._task = None
        self._stopping.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=STOP_GRACE_SECONDS)
        except TimeoutError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _loop(self) -> None:
        if self._wait_first:
            await wait_event(self._stopping, self._seconds())
        while not self._stopping.is_set():
            try:
                await self._work()
            except Exception:
                self._log.exception(self._failure)
            await wait_event(self._stopping, self._seconds())
