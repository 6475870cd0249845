"""Execute one claimed run end to end and commit its terminal state exactly once.

The terminal transaction (`runs.lifecycle.finish`) writes the run's outcome, its last events,
releases the thread and records usage, all conditional on the lease: if this worker lost the
run meanwhile, nothing of it is written, so a re-executed run is counted once.
"""

from __future__ import annotations

import logging
from typing import Any

from atrium.db.models import RunStatus
from atrium.files.image_urls import ImageUnavailable
from atrium.files.model_input import model_input, without_bytes
from atrium.kit.time import utcnow
from atrium.memory.embedders import process_embedder
from atrium.memory.vectors import vectors_of
from atrium.providers.targets import ProviderTarget, ProviderUnavailable, target_of
from atrium.runs.events import event_store
from atrium.runs.lifecycle import Ending, Usage, writes
from atrium.runs.lifecycle.transitions import after_execution
from atrium.runs.thread_compaction import Compacted, Position, compact
from atrium.runtime import compaction
from atrium.runtime.billing import credits_micro
from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.executor import RunOutcome, RunSpec, Runtime, history_from_json
from atrium.runtime.lost_calls import LostCall, lost_calls
from atrium.worker import parked_runs
from atrium.worker.memory_blocks import with_blocks
from atrium.worker.memory_store import RunMemoryStore
from atrium.worker.recorder import LeaseLost, RunRecorder

log = logging.getLogger("atrium.worker")


class RunExecution:
    """One claimed run in this worker: its recorder, its cancellation token, its task."""

    def __init__(self, *, recorder: RunRecorder, runtime: Runtime) -> None:
        self.recorder = recorder
        self.runtime = runtime
        self.claim = recorder.claim
        self.cancellation = RunCancellation()
        # Cancelled while its previous attempt ran, then re-queued: stop before starting.
        self.recorder.cancel_requested = self.claim.cancel_requested

    def request_cancel(self) -> None:
        self.recorder.cancel_requested = True
        self.cancellation.cancel()

    async def run(self) -> None:
        self.recorder.publish(self.claim.started_events)
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
            return RunOutcome(status=RunStatus.CANCELLED)
        try:
            target = await self._target()
            try:
                history, compacted = await self._fitted_history(target)
            except Exception as exc:  # the summarising request ends the run as a model's would
                ended = self.runtime.outcome_of(exc)
                if ended is None:
                    raise
                return ended
            config = await with_blocks(
                self.recorder.db, claim=self.claim, owner=self.recorder.owner
            )
            spec = RunSpec(
                run_id=self.claim.run_id,
                prompt=self.claim.prompt,
                config=config,
                history=history_from_json(history),
                resume=await parked_runs.resume_of(self.recorder.db, self.claim),
                target=target,
                lost_calls=await self._lost_calls(),
                given=await model_input(
                    self.recorder.db,
                    self.recorder.settings,
                    account_id=self.claim.account_id,
                    run_id=self.claim.run_id,
                ),
                memory_store=self._memory_store(),
            )
            outcome = await self.runtime.execute(spec, self.recorder, self.cancellation)
            if spec.given.content:  # the run's stored messages name its files, without bytes
                outcome.messages = without_bytes(outcome.messages)
            if compacted is not None:  # the summarising request is billed with the run
                outcome.input_tokens += compacted.summary.input_tokens
                outcome.output_tokens += compacted.summary.output_tokens
                outcome.requests += 1
            return outcome
        except ProviderUnavailable as exc:
            return RunOutcome(
                status=RunStatus.FAILED, error_code="MODEL_UNAVAILABLE", error_message=str(exc)
            )
        except ImageUnavailable as exc:  # an image URL of its input, refused or unreachable
            return RunOutcome(
                status=RunStatus.FAILED, error_code="INPUT_UNAVAILABLE", error_message=str(exc)
            )
        except LeaseLost:
            raise
        except Exception as exc:
            if self.recorder.lost:
                raise LeaseLost(self.claim.run_id) from exc
            log.exception("run %s failed unexpectedly", self.claim.run_id)
            return RunOutcome(
                status=RunStatus.FAILED,
                error_code="INTERNAL_ERROR",
                error_message=f"the run failed unexpectedly ({type(exc).__name__})",
            )

    def _memory_store(self) -> RunMemoryStore | None:
        """The account's memory, for an agent with memory tools (`config.memory`)."""
        if not self.claim.config.get("memory"):
            return None
        return RunMemoryStore(
            self.recorder.db,
            self.claim.account_id,
            self.claim.run_id,
            embedder=process_embedder(self.recorder.settings),
            vectors=vectors_of(self.recorder.db, self.recorder.settings),
        )

    async def _fitted_history(
        self, target: ProviderTarget | None
    ) -> tuple[list[list[Any]], Compacted | None]:
        """The thread's history, compacted first when it would outgrow the agent's budget
        (`runtime.compaction`). A resumed run keeps the history it started with."""
        claim = self.claim
        history = claim.history
        if claim.waits or not history:
            return history, None
        budget = compaction.budget_of(claim.config)
        if sum(compaction.estimate_tokens(messages) for messages in history) <= budget:
            return history, None
        position = Position(claim.thread_id, claim.run_id, claim.created_at)
        compacted = await compact(
            self.recorder.db,
            self.runtime,
            position=position,
            config=claim.config,
            target=target,
            cancellation=self.cancellation,
        )
        return (history, None) if compacted is None else (compacted.history, compacted)

    async def _lost_calls(self) -> tuple[LostCall, ...]:
        """The MCP calls of this run's earlier attempts, whose worker was lost, since the state
        it starts from (its attempts count from its last wait)."""
        if self.claim.attempt <= 1:
            return ()
        async with self.recorder.db.session(write=False) as session:
            events = await event_store.tool_events_since_wait(session, run_id=self.claim.run_id)
        return tuple(lost_calls(events))

    async def _target(self) -> ProviderTarget | None:
        """The named provider the run's model goes to, as it is now (`providers.targets`)."""
        model = str(self.claim.config.get("model") or "")
        if self.runtime.models.is_registered(model):
            return None
        return await target_of(
            self.recorder.db,
            self.recorder.settings,
            account_id=self.claim.account_id,
            model=model,
        )

    async def _finish(self, outcome: RunOutcome) -> None:
        claim = self.claim
        status = after_execution(outcome.status, cancel_requested=self.recorder.cancel_requested)
        if status == RunStatus.REQUIRES_ACTION:
            await self._wait(outcome)
            return
        usage = Usage(
            input_tokens=outcome.input_tokens,
            output_tokens=outcome.output_tokens,
            requests=outcome.requests,
            tool_calls=outcome.tool_calls,
            credits_micro=credits_micro(
                self.recorder.settings,
                model=claim.model,
                input_tokens=outcome.input_tokens,
                output_tokens=outcome.output_tokens,
            ),
        )
        ending = Ending(
            status,
            usage=usage,
            result=outcome.result,
            error_code=outcome.error_code,
            error_message=outcome.error_message,
            messages=outcome.messages,
        )
        rows = self.recorder.terminal_rows(*ending.event())
        announcement = await writes.finish(
            self.recorder.batcher,
            run=claim,
            owner=self.recorder.owner,
            ending=ending,
            rows=rows,
            now=utcnow(),
        )
        if announcement is None:
            self.recorder.lost = True
            return
        announcement.send(self.recorder.broker)

    async def _wait(self, outcome: RunOutcome) -> None:
        """The run waits for its caller (`worker.parked_runs`): lease and slot are given back."""
        announcement = await parked_runs.park(
            batcher=self.recorder.batcher,
            settings=self.recorder.settings,
            claim=self.claim,
            owner=self.recorder.owner,
            recorder=self.recorder,
            outcome=outcome,
        )
        if announcement is None:
            self.recorder.lost = True
            return
        announcement.send(self.recorder.broker)
