"""Sends runs' spans to the OTLP collector from every process that executes runs.

A move that commits a wait or a terminal state notifies this process's exporter
(`pending.committed`); it builds the run's spans from the stored events and sends those closed
since the run's export mark, then moves the mark. A send that fails leaves the mark: it is
tried again a few times over half a minute, its spans go with the run's next export, and a
sweep sends finished runs of the last day whose mark is behind (an export cut off by a crash, a
collector that was down, a cancel made in an API-only process). So spans are sent at least
once; their ids are derived from the run and its events, so a span sent twice is the same span
(docs/decisions/0055-traces-from-stored-events.md).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.kit.time import utcnow
from atrium.kit.wait_event import wait_event
from atrium.settings import Settings
from atrium.traces import pending, repository
from atrium.traces.spans import Span, build_spans

if TYPE_CHECKING:
    from atrium.traces.otlp import OtlpSpans

log = logging.getLogger(__name__)

# A finished run is swept once its own process had this long to send it.
_SWEEP_GRACE = timedelta(seconds=30)
_SWEEP_SECONDS = 15.0
_SWEEP_WINDOW = timedelta(days=1)
_SWEEP_BATCH = 100
_SEND_TIMEOUT_SECONDS = 10.0
# Runs whose spans go in one request (a burst of runs ending at once).
_BATCH = 50
# A send the collector refused is tried again after these delays, then left to the sweep.
_RETRY_DELAYS = (1.0, 2.0, 4.0, 8.0, 16.0)


class TraceExporter:
    """Started with the worker pool; does nothing unless `otlp_endpoint` is set."""

    def __init__(self, *, settings: Settings, db: Database, batcher: WriteBatcher) -> None:
        self.settings = settings
        self.db = db
        self.batcher = batcher
        self._pending: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._otlp: OtlpSpans | None = None
        # Failed sends in a row, by run: the next retry's delay.
        self._failures: dict[str, int] = {}
        self._retries: set[asyncio.TimerHandle] = set()

    @property
    def enabled(self) -> bool:
        return self.settings.otlp_endpoint is not None

    def start(self) -> None:
        if not self.enabled or self._task is not None:
            return
        pending.register(self)
        self._task = asyncio.create_task(self._loop(), name="atrium-traces")

    async def stop(self) -> None:
        """Stop; a run notified but not sent yet is sent by a sweep (here or elsewhere)."""
        pending.unregister(self)
        for handle in self._retries:
            handle.cancel()
        self._retries.clear()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._otlp is not None:
            await asyncio.to_thread(self._otlp.shutdown)

    def notify(self, run_id: str) -> None:
        self._pending.add(run_id)
        self._wake.set()

    async def _loop(self) -> None:
        next_sweep = 0.0
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            if loop.time() >= next_sweep:
                next_sweep = loop.time() + _SWEEP_SECONDS
                try:
                    await self._sweep()
                except Exception:
                    log.exception("looking for unexported traces failed")
            while self._pending:
                batch = [self._pending.pop() for _ in range(min(len(self._pending), _BATCH))]
                try:
                    await self.export_runs(batch)
                except Exception:
                    log.exception("exporting the traces of runs %s failed", ", ".join(batch))
            await wait_event(self._wake, max(0.0, next_sweep - loop.time()))

    async def _sweep(self) -> None:
        now = utcnow()
        self._pending.update(
            await repository.unexported_finished(
                self.db,
                created_after=now - _SWEEP_WINDOW,
                finished_before=now - _SWEEP_GRACE,
                limit=_SWEEP_BATCH,
            )
        )

    async def export_runs(self, run_ids: list[str]) -> int:
        """Send the runs' spans closed since their marks, in one request; how many were sent."""
        marks: list[tuple[str, int]] = []
        spans: list[Span] = []
        content = self.settings.trace_content
        for stored in await repository.stored_traces(self.db, run_ids, content=content):
            through = stored.events[-1].seq if stored.events else 0
            if through <= stored.exported_seq:
                continue
            marks.append((stored.run.run_id, through))
            spans.extend(
                span
                for span in build_spans(stored.run, stored.events, content=content)
                if stored.exported_seq < span.closed_seq <= through
            )
        if spans and not await asyncio.to_thread(self._send, spans):
            for run_id, _ in marks:
                self._retry_later(run_id)
            return 0
        if marks:
            for run_id, _ in marks:
                self._failures.pop(run_id, None)
            await repository.mark_exported(self.batcher, marks)
        return len(spans)

    def _retry_later(self, run_id: str) -> None:
        failures = self._failures.get(run_id, 0)
        if failures >= len(_RETRY_DELAYS):
            self._failures.pop(run_id, None)
            log.warning(
                "the OTLP collector did not take the spans of run %s; left to the sweep", run_id
            )
            return
        self._failures[run_id] = failures + 1
        log.warning("the OTLP collector did not take the spans of run %s; trying again", run_id)

        def retry() -> None:
            self._retries.discard(handle)
            self.notify(run_id)

        handle = asyncio.get_running_loop().call_later(_RETRY_DELAYS[failures], retry)
        self._retries.add(handle)

    def _send(self, spans: list[Span]) -> bool:
        if self._otlp is None:
            from atrium.traces.otlp import OtlpSpans  # the SDK, on first use (decision 0015)

            assert self.settings.otlp_endpoint is not None
            self._otlp = OtlpSpans(
                self.settings.otlp_endpoint, timeout_seconds=_SEND_TIMEOUT_SECONDS
            )
        return self._otlp.export(spans)
