"""The worker's `RunSink`: events and artifacts of one run, persisted in short transactions.

Events are buffered and written together (streamed text coalesces into one `message.delta`
per flush), at most `run_event_flush_ms` after they happen, with any artifact write, and with
the terminal state: SQLite has one writer, so fewer, larger transactions are what scale. Each
write also renews the run's lease and is conditional on still holding it.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import EventKind
from atrium.kit.ids import new_id
from atrium.kit.json_object import JsonObject
from atrium.kit.time import utcnow
from atrium.runs import events, repository
from atrium.runs.events.broker import Broker
from atrium.runs.events.shapes import EventRow
from atrium.runs.lifecycle import ClaimedRun, run_queue
from atrium.runtime.sink import StoredArtifact
from atrium.settings import Settings

log = logging.getLogger("atrium.worker")


class LeaseLost(Exception):
    """Another worker owns this run now; this one must stop without writing anything."""


@dataclass(kw_only=True, eq=False)
class RunRecorder:
    db: Database
    batcher: WriteBatcher
    broker: Broker
    settings: Settings
    claim: ClaimedRun
    owner: str
    cancel_requested: bool = field(default=False, init=False)
    lost: bool = field(default=False, init=False)
    _seq: int = field(init=False)
    _pending: list[EventRow] = field(default_factory=list, init=False)
    _timer: asyncio.TimerHandle | None = field(default=None, init=False)
    # The flush being written, done once its outcome is handled: one at a time, so events put
    # back by a failed write are retried before any later ones are written or published.
    _inflight: asyncio.Future[None] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._seq = self.claim.last_event_seq

    # --- RunSink ------------------------------------------------------------------------------
    def emit(self, kind: str, payload: JsonObject) -> None:
        self._pending.append(self._row(kind, payload))
        self._schedule()

    def append_text(self, text: str) -> None:
        last = self._pending[-1] if self._pending else None
        if last is not None and last["kind"] == EventKind.MESSAGE_DELTA:
            last["data"] = {"text": last["data"]["text"] + text}
        else:
            self.emit(EventKind.MESSAGE_DELTA, {"text": text})

    async def checkpoint(self) -> bool:
        if self.lost:
            raise LeaseLost(self.claim.run_id)
        return self.cancel_requested

    async def persist(self) -> None:
        await self._flush(required=True)
        if self.lost:
            raise LeaseLost(self.claim.run_id)

    async def write_artifact(self, *, name: str, content: bytes, mime_type: str) -> None:
        now = utcnow()
        values: repository.ArtifactRow = {
            "id": new_id("art"),
            "run_id": self.claim.run_id,
            "thread_id": self.claim.thread_id,
            "account_id": self.claim.account_id,
            "name": name,
            "mime_type": mime_type,
            "size_bytes": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
            "content": content,
            "created_at": now,
        }
        announced = {
            "name": name,
            "mime_type": mime_type,
            "size_bytes": values["size_bytes"],
            "sha256": values["sha256"],
        }
        self._pending.append(
            self._row(EventKind.ARTIFACT_CREATED, {"artifact_id": values["id"], **announced})
        )
        await self._flush(artifact=values)
        if self.lost:
            raise LeaseLost(self.claim.run_id)

    async def list_artifacts(self) -> list[StoredArtifact]:
        async with self.db.session(write=False) as session:
            rows = await repository.thread_artifacts(session, thread_id=self.claim.thread_id)
            return [
                StoredArtifact(row.name, row.mime_type, row.size_bytes, row.run_id) for row in rows
            ]

    async def read_artifact(self, name: str) -> StoredArtifact | None:
        async with self.db.session(write=False) as session:
            row = await repository.thread_artifact(
                session, thread_id=self.claim.thread_id, name=name
            )
            if row is None:
                return None
            return StoredArtifact(row.name, row.mime_type, row.size_bytes, row.run_id, row.content)

    # --- worker side --------------------------------------------------------------------------
    def terminal_rows(self, kind: str, payload: JsonObject) -> list[EventRow]:
        """Every pending event plus the terminal one, taken out of the buffer for `finish`."""
        self._cancel_timer()
        self._pending.append(self._row(kind, payload))
        rows, self._pending = self._pending, []
        return rows

    @property
    def last_seq(self) -> int:
        return self._seq

    async def close(self) -> None:
        self._cancel_timer()
        await self._settled()

    def publish(self, rows: list[EventRow]) -> None:
        if rows:
            self.broker.publish_events(self.claim.run_id, [events.event_message(r) for r in rows])

    # --- internals ----------------------------------------------------------------------------
    def _row(self, kind: str, payload: JsonObject) -> EventRow:
        self._seq += 1
        return events.event_row(self.claim.run_id, self._seq, kind, payload, utcnow())

    def _schedule(self) -> None:
        if self._timer is None and not self.lost:
            delay = self.settings.run_event_flush_ms / 1000
            self._timer = asyncio.get_running_loop().call_later(delay, self._timer_fired)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timer_fired(self) -> None:
        self._timer = None
        # With a flush in flight, the events wait for its end (`_flushed` starts the next).
        if self._pending and self._inflight is None:
            self._start_flush()

    async def _flush(
        self, artifact: repository.ArtifactRow | None = None, *, required: bool = False
    ) -> None:
        """Write the pending events (and `artifact`) after any flush in flight; raises if the
        artifact, or the events when `required`, could not be written."""
        await self._settled()
        if self.lost or (not self._pending and artifact is None):
            return
        # Shielded: a cancelled run still persists what it already emitted.
        await asyncio.shield(self._start_flush(artifact, required=required or artifact is not None))

    async def _settled(self) -> None:
        """Until no flush is in flight (one that ends may start the next)."""
        while self._inflight is not None:
            await asyncio.wait([self._inflight])  # neither raises its error nor cancels it

    def _start_flush(
        self, artifact: repository.ArtifactRow | None = None, *, required: bool = False
    ) -> asyncio.Future[None]:
        """Queue the pending events (and `artifact`) for the write batcher now; the future is
        done once the outcome is handled, failed with the write's error when `required`.

        No task and no lock per flush (a streamed run flushes about once per text delta): the
        batch's result is handled by a callback of its future, which also publishes the events
        before the task that submitted any later write (the terminal one) wakes up.
        """
        self._cancel_timer()
        rows, self._pending = self._pending, []
        seq = rows[-1]["seq"] if rows else self._seq
        run_id, owner, lease = self.claim.run_id, self.owner, self.settings.run_lease_seconds
        attempt = self.claim.attempt

        checkpoint = run_queue.Checkpoint(
            run_id=run_id,
            owner=owner,
            attempt=attempt,
            last_event_seq=seq,
            lease_seconds=lease,
            event_rows=rows,
        )

        def with_artifact(session: Session) -> bool | None:
            flag = checkpoint(session)
            if flag is not None and artifact is not None:
                repository.put_artifact(session, artifact)
            return flag

        handled: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._inflight = handled
        flushed = functools.partial(
            self._flushed, rows=rows, artifact=artifact, required=required, handled=handled
        )
        try:
            # `submit_sync` queues at once: these events commit before any later terminal write.
            # (A `Checkpoint` alone: the batch's consecutive ones are one statement.)
            written = self.batcher.submit_sync(checkpoint if artifact is None else with_artifact)
        except Exception as error:  # the batcher is stopping
            failed: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()
            failed.set_exception(error)
            flushed(failed)
        else:
            written.add_done_callback(flushed)
        return handled

    def _flushed(
        self,
        written: asyncio.Future[bool | None],
        *,
        rows: list[EventRow],
        artifact: repository.ArtifactRow | None,
        required: bool,
        handled: asyncio.Future[None],
    ) -> None:
        self._inflight = None
        error = asyncio.CancelledError() if written.cancelled() else written.exception()
        if error is None:
            flag = written.result()
            if flag is None:
                self.lost = True
            else:
                self.cancel_requested = self.cancel_requested or flag
                self.publish(rows)
        else:
            # Put the events back: the next flush (or the terminal write) retries them.
            self._pending[:0] = rows
            log.error("could not persist events of run %s", self.claim.run_id, exc_info=error)
            if artifact is None:
                self._schedule()
        if not handled.done():  # (a waiter gave up on it: nothing to tell)
            if required and error is not None:
                handled.set_exception(error)  # `write_artifact` or `persist` raises it
            else:
                handled.set_result(None)
        # Events that waited for this flush past their timer go now.
        if self._pending and self._timer is None and not self.lost:
            self._start_flush()
