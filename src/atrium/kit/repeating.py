"""A round of work repeated on the process's event loop until stopped (the maintenance loops:
retention, the file sweep)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any


class Repeating:
    """Run `work` now and then every `seconds()` (read each time: a setting) until `stop`.
    A round of it that raises is logged as `failure` and the next one tries again: these loops
    catch up by design, and one bad round must not end them for the life of the process."""

    def __init__(
        self,
        name: str,
        work: Callable[[], Awaitable[Any]],
        *,
        seconds: Callable[[], float],
        log: logging.Logger,
        failure: str,
    ) -> None:
        self.name = name
        self._work = work
        self._seconds = seconds
        self._log = log
        self._failure = failure
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self._work()
            except Exception:
                self._log.exception(self._failure)
            await asyncio.sleep(self._seconds())
