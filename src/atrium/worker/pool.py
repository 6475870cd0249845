"""A pool of run executions in one process: claim loop, lease heartbeat, recovery of lost runs.

Workers wake the moment a run is queued (the broker's wake-up: in-process, or across processes
one worker process with room, through Redis); the poll every `run_poll_seconds` is only a
safety net. A run whose lease runs out (its worker died) is re-queued with its attempt count
kept, and failed with `WORKER_LOST` once it has used `run_max_attempts`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets
import socket
from datetime import datetime

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.kit.time import utcnow
from atrium.kit.wait_event import wait_event
from atrium.runs.api import presenters
from atrium.runs.events import event_store
from atrium.runs.events.broker import Broker
from atrium.runs.lifecycle import ClaimedRun, run_queue, writes
from atrium.runs.lifecycle.run_queue import ExpiredRun
from atrium.runtime.executor import Runtime
from atrium.schedules.scheduler import Scheduler
from atrium.settings import Settings
from atrium.traces.exporter import TraceExporter
from atrium.webhooks.sender import WebhookSender
from atrium.worker import parked_runs
from atrium.worker.execution import RunExecution
from atrium.worker.recorder import RunRecorder

log = logging.getLogger("atrium.worker")
_CLAIM_BATCH = 32


class WorkerPool:
    """Executes up to `worker_concurrency` runs at once in this process."""

    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        broker: Broker,
        runtime: Runtime | None = None,
        batcher: WriteBatcher | None = None,
    ) -> None:
        self.settings = settings
        self.db = db
        self.broker = broker
        self.runtime = runtime or Runtime(settings)
        self.owner = f"{socket.gethostname()[:32]}:{os.getpid()}:{secrets.token_hex(4)}"
        self._executions: dict[str, RunExecution] = {}
        self._run_tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []
        self._wake = asyncio.Event()
        self._lock_rows = not db.sqlite
        # Shared with the API in `atrium serve` (the app starts and stops it); owned otherwise.
        self._owns_batcher = batcher is None
        self.batcher = batcher or WriteBatcher(db, around_batch=event_store.batched)
        # Webhook deliveries of finished runs, sent by every process that executes runs.
        self.webhooks = WebhookSender(
            settings=settings,
            db=db,
            batcher=self.batcher,
            lock_rows=self._lock_rows,
            render=functools.partial(presenters.run_json, db, settings),
        )
        # Spans of the runs this process waits or ends, when `ATRIUM_OTLP_ENDPOINT` is set.
        self.traces = TraceExporter(settings=settings, db=db, batcher=self.batcher)
        # Schedules whose fire time has come, fired from every process that executes runs.
        self.schedules = Scheduler(settings=settings, db=db, broker=broker)

    async def start(self) -> None:
        if self._loops:
            raise RuntimeError("this worker pool is already running")
        if self._owns_batcher:
            self.batcher.start()
        self.broker.on_wake(self.wake, ready=self._has_room)
        self.broker.on_cancel(self._cancel)
        self._loops = [
            asyncio.create_task(self._claim_loop(), name="atrium-claim"),
            asyncio.create_task(self._heartbeat_loop(), name="atrium-heartbeat"),
            asyncio.create_task(self._recovery_loop(), name="atrium-recovery"),
        ]
        self.webhooks.start()
        self.traces.start()
        self.schedules.start()

    async def stop(self) -> None:
        """Stop claiming, stop the runs in progress and hand them back to the queue.

        Bounded by `shutdown_timeout_seconds`: a stop that hangs (a database that stopped
        answering) must not keep the process alive; runs not handed back are recovered when
        their leases expire.
        """
        try:
            await asyncio.wait_for(self._stop(), self.settings.shutdown_timeout_seconds)
        except TimeoutError:
            log.error(
                "the worker pool did not stop within %s s; its runs are re-queued when their "
                "leases expire",
                self.settings.shutdown_timeout_seconds,
            )

    async def _stop(self) -> None:
        loops, self._loops = self._loops, []
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        await self.schedules.stop()
        await self.webhooks.stop()
        await self.traces.stop()
        for task in list(self._run_tasks):
            task.cancel()
        await asyncio.gather(*self._run_tasks, return_exceptions=True)
        if self._owns_batcher:
            await self.batcher.stop()
        # Whatever this worker still holds (runs in progress, a claim that committed as the
        # claim loop was cancelled) goes back to the queue now rather than after its lease.
        async with self.db.session(write=False) as session:
            running = await run_queue.running_runs_of(session, owner=self.owner)
        for run_id in running:
            try:
                await self._requeue(
                    run_id, owner=self.owner, expired_before=None, reason="shutdown"
                )
            except Exception:  # its lease expires and recovery re-queues it anyway
                log.exception("could not hand run %s back to the queue", run_id)
        await self.runtime.aclose()

    def wake(self) -> None:
        self._wake.set()

    def _has_room(self) -> bool:
        """Claiming, with a free slot: a wake-up meant for one worker process is worth taking."""
        return bool(self._loops) and len(self._executions) < self.settings.worker_concurrency

    def _cancel(self, run_id: str) -> None:
        execution = self._executions.get(run_id)
        if execution is not None:
            execution.request_cancel()

    # --- claiming ---------------------------------------------------------------------------
    async def _claim_loop(self) -> None:
        while True:
            self._wake.clear()
            free = self.settings.worker_concurrency - len(self._executions)
            if free > 0:
                wanted = min(free, _CLAIM_BATCH)
                try:
                    claimed = await self._claim(wanted)
                except Exception:
                    log.exception("claiming runs failed; retrying")
                    await asyncio.sleep(1.0)
                    continue
                if len(claimed) == wanted:
                    continue  # there may be more waiting
            await wait_event(self._wake, self.settings.run_poll_seconds)

    async def _claim(self, limit: int) -> list[ClaimedRun]:
        claimed = await writes.claim_runs(
            self.batcher,
            owner=self.owner,
            limit=limit,
            lease_seconds=self.settings.run_lease_seconds,
            lock_rows=self._lock_rows,
        )
        for claim in claimed:
            recorder = RunRecorder(
                db=self.db,
                batcher=self.batcher,
                broker=self.broker,
                settings=self.settings,
                claim=claim,
                owner=self.owner,
            )
            execution = RunExecution(recorder=recorder, runtime=self.runtime)
            stale = self._executions.get(claim.run_id)
            if stale is not None:
                # This process's own lease of the run expired (its loop stalled past it) and
                # the run came back to it: the earlier execution lost it and must stop.
                stale.recorder.lost = True
                stale.request_cancel()
            self._executions[claim.run_id] = execution
            task = asyncio.create_task(execution.run(), name=f"atrium-run-{claim.run_id}")
            self._run_tasks.add(task)
            task.add_done_callback(functools.partial(self._done, claim.run_id, execution))
        return claimed

    def _done(self, run_id: str, execution: RunExecution, task: asyncio.Task[None]) -> None:
        self._run_tasks.discard(task)
        # Only this execution's entry: a stale one ending must not free the slot of the run's
        # newer execution (the pool would then claim past its concurrency).
        if self._executions.get(run_id) is execution:
            del self._executions[run_id]
        if not task.cancelled() and task.exception() is not None:
            log.error("run %s task failed", run_id, exc_info=task.exception())
        # A slot is free, and the thread's next run may be claimable now.
        self._wake.set()

    # --- leases -------------------------------------------------------------------------------
    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.run_heartbeat_seconds)
            if not self._executions:
                continue
            run_ids = list(self._executions)
            try:
                held = await writes.renew_leases(
                    self.batcher,
                    owner=self.owner,
                    run_ids=run_ids,
                    lease_seconds=self.settings.run_lease_seconds,
                )
            except Exception:
                log.exception("renewing leases failed")
                continue
            for run_id, execution in list(self._executions.items()):
                if run_id not in run_ids:
                    continue  # claimed after the renewal was read
                if run_id not in held:
                    execution.recorder.lost = True
                elif held[run_id]:
                    execution.request_cancel()

    async def _recovery_loop(self) -> None:
        interval = max(0.5, min(self.settings.run_lease_seconds / 3, 10.0))
        while True:
            try:
                await self.recover_expired()
            except Exception:
                log.exception("recovering expired runs failed")
            try:  # runs whose wait for their caller expired: failed, ACTION_EXPIRED
                await parked_runs.expire_waits(
                    db=self.db, broker=self.broker, settings=self.settings
                )
            except Exception:
                log.exception("expiring waiting runs failed")
            await asyncio.sleep(interval)

    async def recover_expired(self) -> int:
        """Re-queue (or fail, past the attempt limit) runs whose worker stopped renewing."""
        now = utcnow()
        async with self.db.session(write=False) as session:
            expired = await run_queue.expired_runs(session, now=now)
        recovered = 0
        for run in expired:
            if run.attempts >= self.settings.run_max_attempts:
                recovered += await self._fail_lost(run)
            else:
                recovered += await self._requeue(
                    run.run_id, owner=run.lease_owner, expired_before=now, reason="worker_lost"
                )
        return recovered

    async def _requeue(
        self, run_id: str, *, owner: str | None, expired_before: datetime | None, reason: str
    ) -> int:
        announcement = await writes.requeue(
            self.db, run_id=run_id, owner=owner, expired_before=expired_before, reason=reason
        )
        if announcement is None:
            return 0
        log.warning("run %s re-queued (%s)", run_id, reason)
        announcement.send(self.broker)
        return 1

    async def _fail_lost(self, run: ExpiredRun) -> int:
        announcement = await writes.fail_lost(self.db, run=run, now=utcnow())
        if announcement is None:
            return 0
        log.error("run %s failed: WORKER_LOST after %d attempts", run.run_id, run.attempts)
        announcement.send(self.broker)
        return 1
