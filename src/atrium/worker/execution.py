"""Execute one claimed run end to end and commit its terminal state exactly once.

The terminal transaction writes the run's outcome, its last events, releases the thread and
records usage, all conditional on the lease: if this worker lost the run meanwhile, nothing
of it is written, so a re-executed run is counted once.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic_ai import CancellationToken
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.kit.time import utcnow
from atrium.runs import events
from atrium.runs.broker import Broker
from atrium.runs.presenters import MICRO
from atrium.runs.terminal import record_terminal
from atrium.runtime.billing import credits_micro
from atrium.runtime.executor import RunOutcome, RunSpec, Runtime, history_from_json
from atrium.settings import Settings
from atrium.webhooks import outbox
from atrium.worker import queue
from atrium.worker.batcher import WriteBatcher
from atrium.worker.queue import ClaimedRun
from atrium.worker.recorder import LeaseLost, RunRecorder

log = logging.getLogger("atrium.worker")


class RunExecution:
    """One claimed run in this worker: its recorder, its cancellation token, its task."""

    def __init__(
        self,
        *,
        db: Database,
        batcher: WriteBatcher,
        broker: Broker,
        settings: Settings,
        runtime: Runtime,
        claim: ClaimedRun,
        owner: str,
    ) -> None:
        self.db = db
        self.batcher = batcher
        self.broker = broker
        self.settings = settings
        self.runtime = runtime
        self.claim = claim
        self.owner = owner
        self.recorder = RunRecorder(
            db=db, batcher=batcher, broker=broker, settings=settings, claim=claim, owner=owner
        )
        self.cancellation = CancellationToken()
        # Cancelled while its previous attempt ran, then re-queued: stop before starting.
        self.recorder.cancel_requested = claim.cancel_requested

    def request_cancel(self) -> None:
        self.recorder.cancel_requested = True
        self.cancellation.cancel()

    async def run(self) -> None:
        self.recorder.publish([self.claim.started_event])
        try:
            outcome = await self._execute()
            if not self.recorder.lost:
                await self._finish(outcome)
        except LeaseLost:
            log.warning("run %s: lease lost; another worker owns it now", self.claim.run_id)
        finally:
            await self.recorder.close()

    async def _execute(self) -> RunOutcome:
        if self.recorder.cancel_requested:
            return RunOutcome(status="cancelled")
        try:
            spec = RunSpec(
                run_id=self.claim.run_id,
                prompt=self.claim.prompt,
                config=self.claim.config,
                history=history_from_json(self.claim.history),
            )
            return await self.runtime.execute(spec, self.recorder, self.cancellation)
        except LeaseLost:
            raise
        except Exception as exc:
            if self.recorder.lost:
                raise LeaseLost(self.claim.run_id) from exc
            log.exception("run %s failed unexpectedly", self.claim.run_id)
            return RunOutcome(
                status="failed",
                error_code="INTERNAL_ERROR",
                error_message=f"the run failed unexpectedly ({type(exc).__name__})",
            )

    async def _finish(self, outcome: RunOutcome) -> None:
        claim = self.claim
        now = utcnow()
        micro = credits_micro(
            self.settings,
            model=claim.model,
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
        )
        billing = {
            "credits": micro / MICRO,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "requests": outcome.requests,
            "tool_calls": outcome.tool_calls,
        }
        payload: dict[str, Any] = {"status": outcome.status, "billing": billing}
        if outcome.status == "completed":
            payload["result"] = outcome.result
        if outcome.status == "failed":
            payload["error"] = {"code": outcome.error_code, "message": outcome.error_message}
        rows = self.recorder.terminal_rows(events.TERMINAL_KIND_OF_STATUS[outcome.status], payload)
        values = {
            "status": outcome.status,
            "result": outcome.result if outcome.status == "completed" else None,
            "error_code": outcome.error_code,
            "error_message": outcome.error_message,
            "messages": outcome.messages if outcome.status == "completed" else None,
            "input_tokens": outcome.input_tokens,
            "output_tokens": outcome.output_tokens,
            "requests": outcome.requests,
            "tool_calls": outcome.tool_calls,
            "credits_micro": micro,
            "finished_at": now,
            "last_event_seq": rows[-1]["seq"],
        }
        owner = self.owner
        recorded = [0]

        def write(session: Session) -> bool:
            held = queue.finish(
                session, run_id=claim.run_id, owner=owner, attempt=claim.attempt, values=values
            )
            if not held:
                return False
            queue.insert_events(session, rows)
            queue.release_thread(session, thread_id=claim.thread_id, run_id=claim.run_id)
            recorded[0] = record_terminal(
                session,
                account_id=claim.account_id,
                agent_id=claim.agent_id,
                run_id=claim.run_id,
                status=outcome.status,
                webhook_url=claim.webhook_url,
                now=now,
                input_tokens=outcome.input_tokens,
                output_tokens=outcome.output_tokens,
                credits_micro=micro,
                requests=outcome.requests,
            )
            return True

        if not await self.batcher.write_sync(write):
            self.recorder.lost = True
            return
        self.recorder.publish(rows)
        if recorded[0]:
            outbox.wake_senders()
