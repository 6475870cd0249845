"""Following one run's events: replay from the database, then live from the broker.

The stream subscribes before it replays, so nothing published in between is missed, and it
drops what it already sent by sequence number. A gap in the sequence (a dropped or unseen
message) or a quiet spell sends it back to the database, which has every committed event: the
broker makes streams fast, never correct. No database session is held while waiting.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator
from typing import Any

from atrium.db.engine import Database
from atrium.runs import events, repository
from atrium.runs.broker import Broker, Subscription

_REPLAY_BATCH = 500


class RunEventStream:
    """An async iterator of `{"id", "event", "data"}` that ends after the terminal event."""

    def __init__(
        self, *, db: Database, broker: Broker, run_id: str, after_seq: int, poll_seconds: float
    ) -> None:
        self.db = db
        self.broker = broker
        self.run_id = run_id
        self.last_seq = after_seq
        self.poll_seconds = poll_seconds
        self.finished = False
        # Quiet polls back off (up to 16x): a thousand streams of queued runs must not turn the
        # safety net into a thousand queries a second.
        self._quiet_polls = 0

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        with self.broker.subscribe(self.run_id) as subscription:
            for message in await self._replay():
                yield message
            while not self.finished:
                for message in await self._next(subscription):
                    yield message

    async def _next(self, subscription: Subscription) -> list[dict[str, Any]]:
        wait = self.poll_seconds * 2 ** min(self._quiet_polls, 4)
        try:
            async with asyncio.timeout(wait):  # no extra task per wait, unlike wait_for
                message = await subscription.queue.get()
        except TimeoutError:
            replayed = await self._replay()
            self._quiet_polls = 0 if replayed else self._quiet_polls + 1
            return replayed
        self._quiet_polls = 0
        if subscription.overflowed:
            subscription.overflowed = False
            while not subscription.queue.empty():
                subscription.queue.get_nowait()
            return await self._replay()
        seq = int(message["id"])
        if seq <= self.last_seq:
            return []
        if seq > self.last_seq + 1:
            return await self._replay()
        return [self._accept(message)]

    def _accept(self, message: dict[str, Any]) -> dict[str, Any]:
        self.last_seq = int(message["id"])
        if message["event"] in events.TERMINAL_KINDS:
            self.finished = True
        return message

    async def _replay(self) -> list[dict[str, Any]]:
        replayed: list[dict[str, Any]] = []
        while not self.finished:
            rows = await self.db.point_read(
                functools.partial(
                    repository.events_after,
                    run_id=self.run_id,
                    after_seq=self.last_seq,
                    limit=_REPLAY_BATCH,
                )
            )
            replayed.extend(self._accept(events.stored_event_message(row)) for row in rows)
            if len(rows) < _REPLAY_BATCH:
                break
        return replayed


def sse_frame(message: dict[str, Any]) -> dict[str, str]:
    """The sse-starlette form of an event: `id:`, `event:` and JSON `data:`.

    A live message is one dict shared by every stream of the run, so its frame is encoded once
    and kept on it.
    """
    frame: dict[str, str] | None = message.get("_frame")
    if frame is None:
        frame = {
            "id": str(message["id"]),
            "event": str(message["event"]),
            "data": json.dumps(message["data"], separators=(",", ":")),
        }
        message["_frame"] = frame
    return frame
