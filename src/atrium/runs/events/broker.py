"""Live fan-out of run events, worker wake-ups and cancel requests.

Events are persisted before they are published, so the broker may lose nothing that matters: a
stream that misses a message (a full queue, a Redis hiccup) notices the gap in the sequence
numbers and re-reads the database. Embedded deployments use the in-process broker; with
`ATRIUM_REDIS_URL` two Redis channels carry events and cancel requests between processes (run
events to the processes that serve streams, cancel requests to the processes that run workers),
and a Redis list carries wake-ups, each to one worker process.
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

from redis.asyncio import ConnectionPool, Redis

from atrium.kit.json_object import JsonObject
from atrium.runs.events.shapes import EventMessage

log = logging.getLogger("atrium.runs.events.broker")
_QUEUE_SIZE = 256
# Wake-up tokens kept at most (one a queued run); how long a pop blocks before it checks again
# that its process has room, and how often a full process checks.
_WAKE_TOKENS = 10_000
_WAKE_BLOCK_SECONDS = 2.0
_FULL_RECHECK_SECONDS = 0.1


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
        self._wake_ready: list[Callable[[], bool]] = []
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

    def on_wake(
        self, listener: Callable[[], None], *, ready: Callable[[], bool] = lambda: True
    ) -> None:
        """Call `listener` when runs are queued. `ready`: whether it can take a run now (a
        wake-up meant for one process goes to one that can)."""
        self._wake_listeners.append(listener)
        self._wake_ready.append(ready)

    def on_cancel(self, listener: Callable[[str], None]) -> None:
        self._cancel_listeners.append(listener)

    def publish_events(self, run_id: str, events: list[EventMessage]) -> None:
        """Hand committed events to this process's readers (and to other processes)."""
        self._deliver_events(run_id, events)

    def wake_workers(self) -> None:
        """New work is queued: this process's workers try to claim now (and, across processes,
        one worker process that has room)."""
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
    """The in-process broker plus, shared by the atrium processes through Redis: two pub/sub
    channels, `<prefix>:runs` for run events and `<prefix>:control` for cancel requests, and a
    list, `<prefix>:wake`, of wake-ups.

    A process subscribes only to what it uses: `events` for one that serves streams, `control`
    for one that runs workers. Every subscriber of a channel receives and decodes every message
    on it, so a worker process on the events channel paid for every event of every run of the
    deployment, and the more workers, the more each run cost in all (py-spy: about 1 ms a run
    with one worker, which got its own events back, 2.6 ms summed over three; decision 0063).
    Local readers are served directly (no round trip); messages from this process that come
    back through Redis are recognised by their origin and skipped.

    A wake-up is a token pushed on the list, and one worker process with room pops it (BLPOP):
    a queued run wakes one worker, which claims it, instead of every worker, each trying a claim
    that all but one lose (decision 0063). A claim takes every claimable run up to its batch, so
    a token may find its run already taken: one empty claim, not one per worker process. A full
    process leaves tokens to others; its own free slot makes it claim anyway. Wake-ups published
    on the control channel (by an older version) are still heard.
    """

    def __init__(
        self, redis: Redis, *, prefix: str, events: bool = True, control: bool = True
    ) -> None:
        super().__init__()
        self._redis = redis
        self._events_channel = f"{prefix}:runs"
        self._control_channel = f"{prefix}:control"
        self._wake_list = f"{prefix}:wake"
        # A pop must end on the server before the client stops reading: redis-py's read
        # timeout (`socket_timeout`: 5 s unless the URL sets it) under a pop as long failed
        # nearly every idle pop, each a logged traceback, a dropped connection and a second
        # without wake-ups.
        read_timeout = redis.connection_pool.connection_kwargs.get("socket_timeout")
        self._block_seconds = (
            _WAKE_BLOCK_SECONDS if not read_timeout else min(_WAKE_BLOCK_SECONDS, read_timeout / 2)
        )
        self._takes_wake_ups = control
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
        self._wake_taker: asyncio.Task[None] | None = None
        self._popper: Redis | None = None
        self._pending: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        if self._takes_wake_ups:
            # A pop holds its connection for seconds: on a connection of its own, outside the
            # pool's cap, it never keeps the process's commands waiting for one.
            pool = self._redis.connection_pool
            self._popper = Redis.from_pool(
                ConnectionPool(
                    connection_class=pool.connection_class,
                    max_connections=1,
                    **pool.connection_kwargs,
                )
            )
            self._wake_taker = asyncio.create_task(
                self._take_wake_ups(self._popper), name="atrium-wake"
            )
        if not self._channels:
            return
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(*self._channels)
        self._listener = asyncio.create_task(self._listen(pubsub), name="atrium-broker")

    async def stop(self) -> None:
        for task in (self._listener, self._wake_taker):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._popper is not None:
            await self._popper.aclose()
            self._popper = None

    def publish_events(self, run_id: str, events: list[EventMessage]) -> None:
        super().publish_events(run_id, events)
        self._send(self._events_channel, {"t": "events", "run_id": run_id, "events": events})

    def wake_workers(self) -> None:
        super().wake_workers()
        task = asyncio.get_running_loop().create_task(self._push_wake_up())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

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

    async def _push_wake_up(self) -> None:
        try:
            # Trimmed: with no worker running, tokens would pile up, one a run; a worker that
            # starts claims the whole queue anyway.
            pipe = self._redis.pipeline(transaction=False)
            pipe.lpush(self._wake_list, "1")
            pipe.ltrim(self._wake_list, 0, _WAKE_TOKENS - 1)
            await pipe.execute()
        except Exception:  # workers poll the queue; a lost wake-up only adds lag
            log.warning("could not push a wake-up to redis", exc_info=True)

    async def _take_wake_ups(self, popper: Redis) -> None:
        """Pop wake-ups while a listener has room, each handed to this process's workers."""
        while True:
            if not any(ready() for ready in self._wake_ready):
                # Full (or no workers yet): the token is left to a process with room.
                await asyncio.sleep(_FULL_RECHECK_SECONDS)
                continue
            try:
                token = await popper.blpop([self._wake_list], timeout=self._block_seconds)
            except Exception:
                log.warning("taking wake-ups from redis failed; retrying", exc_info=True)
                await asyncio.sleep(1.0)
                continue
            if token is not None:
                self._deliver_wake()

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
