"""Following one run's events: replay from the database, then live from the broker.

The stream subscribes before it replays, so nothing published in between is missed, and it
drops what it already sent by sequence number. A gap in the sequence (a dropped or unseen
message) or a quiet spell sends it back to the database, which has every committed event: the
broker makes streams fast, never correct. No database session is held while waiting.

A stream outlives the authentication of the request that opened it, so it asks again whether
its key is still valid every `recheck_seconds`, waking for that even while the run is quiet: a
revoked key's stream ends with an `error` frame (the one error body, `UNAUTHORIZED`) within
that time, instead of following the run to its end
(docs/decisions/0032-streams-recheck-their-key.md).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

from sse_starlette import EventSourceResponse
from starlette.types import Message, Send

from atrium.db.engine import Database
from atrium.db.models import TERMINAL_KINDS
from atrium.errors import Unauthorized, error_body
from atrium.runs import events
from atrium.runs.events import event_store
from atrium.runs.events.broker import Broker, Subscription
from atrium.runs.events.shapes import EventMessage

_REPLAY_BATCH = 500


class RunEventStream:
    """An async iterator of `{"id", "event", "data"}` that ends after the terminal event, or
    with an `error` message (no id) once `still_authorized` answers False."""

    def __init__(
        self,
        *,
        db: Database,
        broker: Broker,
        run_id: str,
        after_seq: int,
        poll_seconds: float,
        still_authorized: Callable[[], Awaitable[bool]] | None = None,
        recheck_seconds: float = 5.0,
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
        self._still_authorized = still_authorized
        self._recheck_seconds = recheck_seconds
        self._poll_at = self._check_at = 0.0  # loop times, set when iteration starts

    async def __aiter__(self) -> AsyncIterator[EventMessage]:
        now = asyncio.get_running_loop().time()
        self._check_at = now + self._recheck_seconds
        self._poll_at = now + self.poll_seconds
        with self.broker.subscribe(self.run_id) as subscription:
            for message in await self._replay():
                yield message
            while not self.finished:
                if not await self._authorized():
                    self.finished = True
                    yield access_ended_message()
                    return
                for message in await self._next(subscription):
                    yield message

    async def _authorized(self) -> bool:
        """Ask `still_authorized` when a re-check is due: one point read per interval."""
        if self._still_authorized is None:
            return True
        now = asyncio.get_running_loop().time()
        if now < self._check_at:
            return True
        self._check_at = now + self._recheck_seconds
        return await self._still_authorized()

    async def _next(self, subscription: Subscription) -> list[EventMessage]:
        loop = asyncio.get_running_loop()
        wake_at = self._poll_at
        if self._still_authorized is not None:
            wake_at = min(wake_at, self._check_at)
        try:
            async with asyncio.timeout_at(wake_at):  # no extra task per wait, unlike wait_for
                message = await subscription.queue.get()
        except TimeoutError:
            if loop.time() < self._poll_at:
                return []  # woken for the key re-check, which the caller makes
            replayed = await self._replay()
            self._quiet_polls = 0 if replayed else self._quiet_polls + 1
            self._schedule_poll()
            return replayed
        self._quiet_polls = 0
        self._schedule_poll()
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

    def _schedule_poll(self) -> None:
        wait = self.poll_seconds * 2 ** min(self._quiet_polls, 4)
        self._poll_at = asyncio.get_running_loop().time() + wait

    def _accept(self, message: EventMessage) -> EventMessage:
        self.last_seq = int(message["id"])
        if message["event"] in TERMINAL_KINDS:
            self.finished = True
        return message

    async def _replay(self) -> list[EventMessage]:
        replayed: list[EventMessage] = []
        while not self.finished:
            rows = await event_store.replay_batch(
                self.db, run_id=self.run_id, after_seq=self.last_seq, limit=_REPLAY_BATCH
            )
            replayed.extend(self._accept(events.stored_event_message(row)) for row in rows)
            if len(rows) < _REPLAY_BATCH:
                break
        return replayed


def access_ended_message() -> EventMessage:
    """The last message of a stream whose key is no longer valid: an `error` event whose data
    is the one error body (`UNAUTHORIZED`). It has no id: it is not an event of the run, and a
    client resuming after it must not skip one."""
    body = error_body(
        Unauthorized.code,
        "the API key of this stream is no longer valid (revoked); reconnect with a valid key",
    )
    return {"event": "error", "data": body}


def sse_frame(message: EventMessage) -> bytes:
    """The SSE frame of an event: `id:`, `event:` and JSON `data:` lines, as sse-starlette
    writes them (CRLF line ends).

    Written here rather than by sse-starlette (`ServerSentEvent.encode`: a `StringIO` and a
    line-splitting regex per field, per frame, per stream): JSON text has no line breaks, and a
    live message is one dict shared by every stream of the run, so its frame is encoded once and
    kept on it.
    """
    frame: bytes | None = message.get("_frame")
    if frame is None:
        data = json.dumps(message["data"], separators=(",", ":"))
        head = f"id: {message['id']}\r\n" if "id" in message else ""
        frame = f"{head}event: {message['event']}\r\ndata: {data}\r\n\r\n".encode()
        message["_frame"] = frame
    return frame


class EventStreamResponse(EventSourceResponse):
    """sse-starlette's response without a cancel scope around each send when no send timeout
    is set (atrium sets none): `move_on_after(None)` never cancels, but entering and leaving
    an anyio cancel scope per frame is a measurable part of streaming
    (docs/decisions/0027-sse-frames-written-once.md)."""

    async def _send_with_timeout(self, send: Send, message: Message) -> None:
        if self.send_timeout is None:
            await send(message)
        else:  # pragma: no cover - atrium sets no send timeout
            await super()._send_with_timeout(send, message)
