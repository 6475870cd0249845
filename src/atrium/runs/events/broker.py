"""Live fan-out of run events, worker wake-ups and cancel requests.

Events are persisted before they are published, so the broker may lose nothing that matters: a
stream that misses a message (a full queue, a Redis hiccup) notices the gap in the sequence
numbers and re-reads the database. Embedded deployments use the in-process broker; with
`ATRIUM_REDIS_URL` two Redis channels carry them between processes: run events to the processes
that serve streams, wake-ups and cancel requests to the processes that run workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from atrium.kit.json_object import JsonObject
from atrium.runs.events.shapes import EventMessage

log = logging.getLogger("atrium.runs.events.broker")
_QUEUE_SIZE = 256


@dataclass(slots=True, eq=False)
class Subscription:
    """The live events of one run for one reader; `overflowed` means some were dropped."""

    run_id: str
    queue: asyncio.Queue[EventMessage] = field(
        default_factory=lambda: asyncio.Queue(maxsize=_QUEUE_SIZE)
    )
    overflowed: bool = False

    def deliver(self, event: EventMessage) -> None:
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.overflowed = True


class Broker:
    """In-process fan-out. Publishing is synchronous, so it can run in a commit hook."""

    def __init__(self) -> None:
        self._subscriptions: dict[str, set[Subscription]] = {}
        self._wake_listeners: list[Callable[[], None]] = []
        self._cancel_listeners: list[Callable[[str], None]] = []

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    @contextlib.contextmanager
    def subscribe(self, run_id: str) -> Iterator[Subscription]:
        subscription = Subscription(run_id)
        self._subscriptions.setdefault(run_id, set()).add(subscription)
        try:
            yield subscription
        finally:
            subscribers = self._subscriptions.get(run_id)
            if subscribers is not None:
                subscribers.discard(subscription)
                if not subscribers:
                    del self._subscriptions[run_id]

    def on_wake(self, listener: Callable[[], None]) -> None:
        self._wake_listeners.append(listener)

    def on_cancel(self, listener: Callable[[str], None]) -> None:
        self._cancel_listeners.append(listener)

    def publish_events(self, run_id: str, events: list[EventMessage]) -> None:
        """Hand committed events to this process's readers (and to other processes)."""
        self._deliver_events(run_id, events)

    def wake_workers(self) -> None:
        """New work is queued: every worker should try to claim now."""
        self._deliver_wake()

    def request_cancel(self, run_id: str) -> None:
        """Ask whichever worker executes `run_id` to stop it now rather than at its next check."""
        self._deliver_cancel(run_id)

    def _deliver_events(self, run_id: str, events: list[EventMessage]) -> None:
        for subscription in list(self._subscriptions.get(run_id, ())):
            for event in events:
                subscription.deliver(event)

    def _deliver_wake(self) -> None:
        for listener in self._wake_listeners:
            listener()

    def _deliver_cancel(self, run_id: str) -> None:
        for listener in self._cancel_listeners:
            listener(run_id)


class RedisBroker(Broker):
    """The in-process broker plus two Redis pub/sub channels shared by the atrium processes:
    `<prefix>:runs` carries run events, `<prefix>:control` wake-ups and cancel requests.

    A process subscribes only to what it uses: `events` for one that serves streams, `control`
    for one that runs workers. Every subscriber of a channel receives and decodes every message
    on it, so a worker process on the events channel paid for every event of every run of the
    deployment, and the more workers, the more each run cost in all (py-spy: about 1 ms a run
    with one worker, which got its own events back, 2.6 ms summed over three; decision 0063).
    Local readers are served directly (no round trip); messages from this process that come
    back through Redis are recognised by their origin and skipped.
    """

    def __init__(
        self, redis: Redis, *, prefix: str, events: bool = True, control: bool = True
    ) -> None:
        super().__init__()
        self._redis = redis
        self._events_channel = f"{prefix}:runs"
        self._control_channel = f"{prefix}:control"
        self._channels = [
            channel
            for channel, wanted in (
                (self._events_channel, events),
                (self._control_channel, control),
            )
            if wanted
        ]
        self._origin = secrets.token_hex(8)
        self._listener: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        if not self._channels:
            return
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(*self._channels)
        self._listener = asyncio.create_task(self._listen(pubsub), name="atrium-broker")

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

    def publish_events(self, run_id: str, events: list[EventMessage]) -> None:
        super().publish_events(run_id, events)
        self._send(self._events_channel, {"t": "events", "run_id": run_id, "events": events})

    def wake_workers(self) -> None:
        super().wake_workers()
        self._send(self._control_channel, {"t": "wake"})

    def request_cancel(self, run_id: str) -> None:
        super().request_cancel(run_id)
        self._send(self._control_channel, {"t": "cancel", "run_id": run_id})

    def _send(self, channel: str, message: JsonObject) -> None:
        payload = json.dumps({"o": self._origin, **message}, separators=(",", ":"))
        task = asyncio.get_running_loop().create_task(self._publish(channel, payload))
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _publish(self, channel: str, payload: str) -> None:
        try:
            await self._redis.publish(channel, payload)
        except Exception:  # readers recover from the database; a lost message only adds lag
            log.warning("could not publish to redis", exc_info=True)

    async def _listen(self, pubsub: Any) -> None:
        try:
            while True:
                try:
                    message = await pubsub.get_message(timeout=1.0)
                except Exception:
                    log.warning("redis subscription failed; retrying", exc_info=True)
                    await asyncio.sleep(1.0)
                    await pubsub.subscribe(*self._channels)
                    continue
                if message is not None:
                    self._dispatch(json.loads(message["data"]))
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    def _dispatch(self, message: JsonObject) -> None:
        if message.get("o") == self._origin:
            return
        kind = message.get("t")
        if kind == "events":
            self._deliver_events(message["run_id"], message["events"])
        elif kind == "wake":
            self._deliver_wake()
        elif kind == "cancel":
            self._deliver_cancel(message["run_id"])
