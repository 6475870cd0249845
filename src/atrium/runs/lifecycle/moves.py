"""The run lifecycle: the one module that moves a run from one status to another.

    create ─▶ queued ──claim──▶ running ──finish──▶ completed | failed | cancelled
                │  ▲               │
                │  └───requeue─────┘   (worker lost or stopping; the next claim emits
                │                       run.restarted before run.started)
                └────cancel────────▶ cancelled          running ──fail_lost──▶ failed

    running ──wait──▶ requires_action ──answer──▶ queued   (the caller's tools or approvals)
                            └──end_wait──▶ cancelled | failed (ACTION_EXPIRED)

The allowed moves are the table of `transitions` (each function names its move there, and the
conditional updates of `run_queue` and `waiting_runs` take their from-states from it). Every
move is written here, inside the caller's transaction: the run's row (those conditional updates
arbitrate races), its event rows, and for a terminal state the usage rollup and the webhook
outbox, so all of them exist exactly when the state committed. What others must hear of it
(events to readers, a wake-up of workers or webhook senders) comes back as an `Announcement`,
sent only once the transaction committed: nobody is told about a state that then rolled back.

The functions are synchronous steps of a transaction: the write batcher's (the hot path),
`Database.write_sync`'s (recovery) or the request's session through `run_sync` (a cancel);
docs/design.md#lifecycle says which caller uses which.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from typing import Any, Protocol, TypedDict

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.agents.config import AgentConfig, stored_config
from atrium.analytics.service import MICRO, record_run_usage
from atrium.db.models import TERMINAL_EVENT, CancelReason, EventKind, Run, RunStatus
from atrium.kit.json_object import JsonObject
from atrium.kit.time import isoformat, utcnow
from atrium.runs import events, repository
from atrium.runs.events import event_store
from atrium.runs.events.broker import Broker
from atrium.runs.events.shapes import EventRow
from atrium.runs.lifecycle import run_queue, transitions, waiting_runs
from atrium.runs.lifecycle.run_queue import ExpiredRun
from atrium.runs.lifecycle.thread_history import thread_history
from atrium.runs.lifecycle.waiting_runs import AnswerRow
from atrium.runs.repository import NewRun, NewThread
from atrium.runs.run_columns import RequiredActionJson, RunColumns
from atrium.runtime.waited_calls import PendingCall
from atrium.traces import pending as traces_pending
from atrium.webhooks import outbox

log = logging.getLogger("atrium.runs")
_AFTER_COMMIT = "atrium_after_commit"


class _Counted(Protocol):
    """A run's stored counters: its row, or an expired wait's."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def requests(self) -> int: ...
    @property
    def tool_calls(self) -> int: ...
    @property
    def credits_micro(self) -> int: ...


class Billing(TypedDict):
    """A terminal event's `billing`: credits, never a currency."""

    credits: float
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int


@dataclass(frozen=True, slots=True)
class Usage:
    """What a run consumed; zero for a run that never ran or whose attempts were lost."""

    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    tool_calls: int = 0
    credits_micro: int = 0

    @classmethod
    def of(cls, run: _Counted) -> Usage:
        """What a stored run consumed so far (a waiting run, before its wait): its counters
        carry the names of these fields."""
        return cls(*(getattr(run, each.name) for each in fields(cls)))

    def billing(self) -> Billing:
        """The `billing` of the terminal event (credits, never a currency)."""
        return {
            "credits": self.credits_micro / MICRO,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "requests": self.requests,
            "tool_calls": self.tool_calls,
        }


@dataclass(frozen=True, slots=True)
class Waiting:
    """How a run waits for its caller: the calls it waits for, until when, and its messages
    and usage so far."""

    calls: list[PendingCall]
    expires_at: datetime
    messages: list[Any] | None
    usage: Usage

    def required_action(self) -> RequiredActionJson:
        """What the run waits for, as the API shows it (`required_action`)."""
        return {
            "type": "tool_calls",
            "expires_at": isoformat(self.expires_at),
            "tool_calls": self.calls,
        }

    def columns(self, *, last_event_seq: int) -> RunColumns:
        """The run row's values at the wait."""
        usage = self.usage
        return {
            "required_action": self.required_action(),
            "action_expires_at": self.expires_at,
            "messages": self.messages,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "requests": usage.requests,
            "tool_calls": usage.tool_calls,
            "credits_micro": usage.credits_micro,
            "last_event_seq": last_event_seq,
        }


@dataclass(frozen=True, slots=True)
class Ending:
    """How a run ends: its terminal status and what goes with it."""

    status: RunStatus
    usage: Usage = Usage()
    # Text, or the JSON object of a run with an output schema (completed runs only).
    result: str | JsonObject | None = None
    error_code: str | None = None
    error_message: str | None = None
    # The messages the run adds to its thread: a completed run's, or what a cancelled one
    # produced before its cancel (its thread's history takes them when a later prompt
    # interrupted it: `run_queue.IN_HISTORY`; None keeps what its row holds, a wait's).
    messages: list[Any] | None = None
    # A cancel's reason, when this write is the cancel itself (a worker's finish keeps the one
    # its run was flagged with).
    cancel_reason: CancelReason | None = None

    def event(self) -> tuple[EventKind, JsonObject]:
        """The terminal event's kind and payload."""
        payload: JsonObject = {"status": self.status, "billing": self.usage.billing()}
        if self.status == RunStatus.COMPLETED:
            payload["result"] = self.result
        elif self.status == RunStatus.FAILED:
            payload["error"] = {"code": self.error_code, "message": self.error_message}
        else:
            payload["cancel_reason"] = self.cancel_reason
        return TERMINAL_EVENT[self.status], payload

    def columns(self, now: datetime) -> RunColumns:
        """The run row's values in this state."""
        completed = self.status == RunStatus.COMPLETED
        result = self.result if completed else None
        values: RunColumns = {
            "status": self.status,
            # `result` (text) or `result_json` (a run with an output schema).
            "result": None if isinstance(result, dict) else result,
            "result_json": result if isinstance(result, dict) else None,
            "error_code": self.error_code,
            "error_message": self.error_message,
            "messages": self.messages if completed else None,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "requests": self.usage.requests,
            "tool_calls": self.usage.tool_calls,
            "credits_micro": self.usage.credits_micro,
            "finished_at": now,
        }
        if self.status == RunStatus.CANCELLED:
            if self.messages is None:
                del values["messages"]
            else:
                values["messages"] = self.messages
        if self.cancel_reason is not None:
            values["cancel_reason"] = self.cancel_reason
        return values


@dataclass(slots=True)
class Announcement:
    """What to tell once a transition committed: its events, and whom to wake."""

    run_id: str
    rows: list[EventRow]
    # The queue changed: a run to claim, or a thread whose next run may start now.
    wake_workers: bool = False
    # Webhook deliveries were recorded (this process's senders; others find them by polling).
    deliveries: int = 0
    # A running run was flagged: its worker, in whichever process, stops it now.
    cancel_requested: bool = False

    def send(self, broker: Broker) -> None:
        if self.rows:
            broker.publish_events(self.run_id, [events.event_message(row) for row in self.rows])
        if self.wake_workers:
            broker.wake_workers()
        if self.cancel_requested:
            broker.request_cancel(self.run_id)
        if self.deliveries:
            outbox.wake_senders()
        # A wait or an end: this process's trace exporter sends the run's spans.
        traces_pending.committed(self.run_id, [row["kind"] for row in self.rows])


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run this worker now holds the lease of (plain values: no ORM object outlives a session)."""

    run_id: str
    account_id: int
    thread_id: str
    agent_id: str
    model: str
    prompt: str
    config: AgentConfig
    attempt: int
    last_event_seq: int
    created_at: datetime
    cancel_requested: bool
    # `run.started`, after `run.restarted` on a later attempt: published when execution starts.
    started_events: list[EventRow]
    # The run's history (pydantic-ai JSON), oldest first, as `thread_history` composes it.
    history: list[list[Any]] = field(default_factory=list)
    # The run's own webhook (its signing secret is read by the sender, not kept here).
    webhook_url: str | None = None
    # How many times the run has waited for its caller: > 0, it resumes from its last wait.
    waits: int = 0


# --- the transitions ----------------------------------------------------------------------------
def create(
    session: Session, *, thread: NewThread | None, run: NewRun, now: datetime
) -> Announcement:
    """A new run (and its new thread), queued, with its `run.queued` event (see `created`)."""
    row = events.event_row(run.id, 1, EventKind.QUEUED, {"status": RunStatus.QUEUED}, now)
    repository.insert_run(session, thread=thread, run=run, status=RunStatus.QUEUED, event=row)
    return Announcement(run.id, [row], wake_workers=True)


def created(run: NewRun) -> Run:
    """The run as `create` stored it: a detached object, for its creator's response."""
    return Run(**run.attributes(status=RunStatus.QUEUED, last_event_seq=1))


def claim(
    session: Session, *, owner: str, limit: int, lease_seconds: float, lock_rows: bool
) -> list[ClaimedRun]:
    """queued -> running for up to `limit` runs: a lease, attempt + 1, `run.started` (after
    `run.restarted` when an earlier attempt was lost: what it streamed is superseded)."""
    status = transitions.CLAIM.target
    candidates = run_queue.claimable(session, limit=limit, lock_rows=lock_rows)
    # Read the clock after the queue: a run's start is never stamped before the end of the run
    # it waited for.
    now = utcnow()
    lease_expires_at = now + timedelta(seconds=lease_seconds)
    claimed: list[ClaimedRun] = []
    for run_id, thread_id in candidates:
        taken = run_queue.take_thread(session, thread_id=thread_id, run_id=run_id)
        if taken is None:
            continue
        run = run_queue.start_run(
            session, run_id=run_id, owner=owner, lease_expires_at=lease_expires_at, now=now
        )
        if run is None:
            run_queue.release_thread(session, thread_id=thread_id, run_id=run_id)
            continue
        seq, attempt = run.last_event_seq, run.attempts
        started = [
            events.event_row(
                run_id, seq, EventKind.STARTED, {"status": status, "attempt": attempt}, now
            )
        ]
        if attempt > 1:
            restarted = {"attempt": attempt}
            started.insert(
                0, events.event_row(run_id, seq - 1, EventKind.RESTARTED, restarted, now)
            )
        event_store.insert_events(session, started)
        claimed.append(
            ClaimedRun(
                run_id=run_id,
                account_id=run.account_id,
                thread_id=thread_id,
                agent_id=run.agent_id,
                model=run.model,
                prompt=run.prompt,
                config=stored_config(run.agent_config),
                attempt=attempt,
                last_event_seq=seq,
                created_at=run.created_at,
                cancel_requested=bool(run.cancel_requested),
                started_events=started,
                history=(
                    thread_history(
                        session, thread_id=thread_id, run_id=run_id, created_at=run.created_at
                    )
                    if taken.has_history
                    else []
                ),
                webhook_url=run.webhook_url,
                waits=run.waits,
            )
        )
    return claimed


def finish(
    session: Session,
    *,
    run: ClaimedRun,
    owner: str,
    ending: Ending,
    rows: list[EventRow],
    now: datetime,
) -> Announcement | None:
    """running -> `ending.status`, with the run's last events `rows` (the terminal one last),
    while `owner` holds the lease of this attempt; None (nothing written) otherwise."""
    transitions.FINISH.to(ending.status)
    values = ending.columns(now) | {"last_event_seq": rows[-1]["seq"]}
    finished = run_queue.finish(
        session,
        run_id=run.run_id,
        account_id=run.account_id,
        owner=owner,
        attempt=run.attempt,
        values=values,
    )
    if finished is None:
        return None
    if ending.status == RunStatus.CANCELLED:
        # The worker knows it was cancelled, not why: the row says (the flag's reason).
        rows[-1]["data"]["cancel_reason"] = finished.cancel_reason
    run_queue.release_thread(session, thread_id=run.thread_id, run_id=run.run_id)
    return _ended(
        session,
        run=run,
        ending=ending,
        rows=rows,
        now=now,
        waits=run.waits,
        has_endpoints=finished.has_endpoints,
    )


def wait(
    session: Session,
    *,
    run: ClaimedRun,
    owner: str,
    waiting: Waiting,
    rows: list[EventRow],
    payload: Callable[[Session], str],
    now: datetime,
) -> Announcement | None:
    """running -> requires_action while `owner` holds this attempt's lease: the run's state at
    the wait (`waiting`), its last events `rows`
    (`run.requires_action` last) and the `run.requires_action` deliveries, whose body
    `payload` renders now. The lease and the thread are given back: the thread's later runs
    still wait (the claim skips a thread with a waiting run) and the answered run takes it
    again. None (nothing written) when the lease was lost."""
    values = waiting.columns(last_event_seq=rows[-1]["seq"])
    if (
        waiting_runs.park(
            session, run_id=run.run_id, owner=owner, attempt=run.attempt, values=values
        )
        is None
    ):
        return None
    event_store.insert_events(session, rows)
    run_queue.release_thread(session, thread_id=run.thread_id, run_id=run.run_id)
    deliveries = outbox.record_run_event(
        session,
        run=run,
        event=EventKind.REQUIRES_ACTION,
        now=now,
        payload=lambda: payload(session),
    )
    return Announcement(run.run_id, rows, deliveries=deliveries)


def answer(
    session: Session, *, run_id: str, wait: int, answer: AnswerRow, now: datetime
) -> Announcement | None:
    """requires_action -> queued with the caller's `answer` to wait number `wait` (stored for
    the worker that resumes the run); None when the run no longer waits on it (answered
    first by another request, cancelled, expired)."""
    status = transitions.ANSWER.target
    seq = waiting_runs.requeue_answered(session, run_id=run_id, wait=wait, now=now)
    if seq is None:
        return None
    waiting_runs.add_answer(session, answer)
    payload = {"status": status, "reason": "actions_submitted"}
    row = events.event_row(run_id, seq, EventKind.QUEUED, payload, now)
    event_store.insert_events(session, [row])
    return Announcement(run_id, [row], wake_workers=True)


def end_wait(
    session: Session, *, run: _Ended, ending: Ending, waits: int, now: datetime
) -> Announcement | None:
    """requires_action -> cancelled (the caller cancelled) or failed (`ACTION_EXPIRED`),
    counted with what the run used before its wait (`ending.usage`); None when the run
    stopped waiting first."""
    transitions.END_WAIT.to(ending.status)
    values = ending.columns(now) | {"cancel_requested": ending.status == RunStatus.CANCELLED}
    seq = waiting_runs.finish_waiting(session, run_id=run.run_id, now=now, values=values)
    if seq is None:
        return None
    return _ended_by_others(session, run=run, ending=ending, seq=seq, now=now, waits=waits)


def cancel_queued(
    session: Session, *, run: _Ended, now: datetime, reason: CancelReason = CancelReason.CLIENT
) -> Announcement | None:
    """queued -> cancelled; None when a worker claimed the run first."""
    ending = Ending(transitions.CANCEL_QUEUED.target, cancel_reason=reason)
    seq = run_queue.cancel_queued(session, run_id=run.run_id, now=now, reason=reason)
    if seq is None:
        return None
    return _ended_by_others(session, run=run, ending=ending, seq=seq, now=now)


def flag_cancel(session: Session, *, run_id: str, reason: CancelReason) -> Announcement | None:
    """Flag a running run (`REQUEST_CANCEL`): its worker finishes it as cancelled at its next
    step, told once this commits; None when the run was no longer running."""
    if not run_queue.request_cancel(session, run_id=run_id, reason=reason):
        return None
    return Announcement(run_id, [], cancel_requested=True)


def requeue(
    session: Session,
    *,
    run_id: str,
    owner: str | None,
    expired_before: datetime | None,
    reason: str,
) -> Announcement | None:
    """running -> queued: its lease expired (`expired_before`), or its worker is stopping.
    None when the run was no longer running under `owner`."""
    status = transitions.REQUEUE.target
    found = run_queue.requeue(session, run_id=run_id, owner=owner, expired_before=expired_before)
    if found is None:
        return None
    seq, thread_id = found
    run_queue.release_thread(session, thread_id=thread_id, run_id=run_id)
    payload = {"status": status, "reason": reason}
    row = events.event_row(run_id, seq, EventKind.QUEUED, payload, utcnow())
    event_store.insert_events(session, [row])
    return Announcement(run_id, [row], wake_workers=True)


def fail_lost(session: Session, *, run: ExpiredRun, now: datetime) -> Announcement | None:
    """running -> failed (`WORKER_LOST`): its lease expired on the last allowed attempt. What
    the lost attempts consumed is unknown: the run is counted, with no usage."""
    ending = Ending(
        transitions.FAIL_LOST.target,
        error_code="WORKER_LOST",
        error_message=f"the run's worker stopped responding on each of {run.attempts} attempts",
    )
    seq = run_queue.fail_expired(
        session, run_id=run.run_id, owner=run.lease_owner, now=now, values=ending.columns(now)
    )
    if seq is None:
        return None
    run_queue.release_thread(session, thread_id=run.thread_id, run_id=run.run_id)
    return _ended_by_others(session, run=run, ending=ending, seq=seq, now=now)


class _Ended(outbox.RunOfEvent, Protocol):
    """What a terminal write needs to know of its run (a claim, an expired or a queued run):
    what its deliveries need, and its agent for the usage rollup."""

    @property
    def agent_id(self) -> str: ...


@dataclass(frozen=True, slots=True)
class _RunRef:
    run_id: str
    account_id: int
    agent_id: str
    webhook_url: str | None

    @classmethod
    def of(cls, run: Run) -> _RunRef:
        """Plain values of a request's loaded run, for a step of its transaction."""
        return cls(run.id, run.account_id, run.agent_id, run.webhook_url)


def _ended_by_others(
    session: Session, *, run: _Ended, ending: Ending, seq: int, now: datetime, waits: int = 0
) -> Announcement:
    """A run ended by others than its worker (a cancel, recovery, a wait's end): its one
    terminal event, and
    workers woken (the thread's next run may have been waiting behind it)."""
    rows = [events.event_row(run.run_id, seq, *ending.event(), now)]
    announcement = _ended(session, run=run, ending=ending, rows=rows, now=now, waits=waits)
    announcement.wake_workers = True
    return announcement


def _ended(
    session: Session,
    *,
    run: _Ended,
    ending: Ending,
    rows: list[EventRow],
    now: datetime,
    waits: int = 0,
    has_endpoints: bool = True,
) -> Announcement:
    """What every terminal transition writes besides the run: its events, the run counted once
    in the usage rollup (with how many times it waited), its webhook deliveries (the account's
    endpoints are not read when this transaction already found it has none)."""
    event_store.insert_events(session, rows)
    usage = ending.usage
    record_run_usage(
        session,
        account_id=run.account_id,
        agent_id=run.agent_id,
        day=now.date(),
        status=ending.status,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        credits_micro=usage.credits_micro,
        requests=usage.requests,
        waits=waits,
    )
    deliveries = outbox.record_run_outcome(
        session, run=run, status=ending.status, now=now, has_endpoints=has_endpoints
    )
    return Announcement(run.run_id, rows, deliveries=deliveries)


# --- in a request's session ---------------------------------------------------------------------
async def cancel(
    session: AsyncSession, *, broker: Broker, run: Run, reason: CancelReason = CancelReason.CLIENT
) -> bool:
    """A cancel, in the request's transaction (announced once it commits): the move
    `transitions.cancel_move` picks for the run's status. A queued run a worker claimed first,
    or a waiting run answered first, is flagged for its worker instead. False when nothing
    changed (the run finished, or was no longer running to be flagged)."""
    move = transitions.cancel_move(RunStatus(run.status))
    if move is None:
        return False
    if move is transitions.CANCEL_QUEUED and await _cancel_queued_in_request(
        session, broker=broker, run=run, reason=reason
    ):
        return True
    if move is transitions.END_WAIT and await _cancel_waiting_in_request(
        session, broker=broker, run=run, reason=reason
    ):
        return True
    return await request_cancel(session, broker=broker, run_id=run.id, reason=reason)


async def _cancel_queued_in_request(
    session: AsyncSession, *, broker: Broker, run: Run, reason: CancelReason
) -> bool:
    """Cancel a queued run in the request's transaction (announced once it commits); False
    when a worker claimed it first."""
    ref = _RunRef.of(run)
    return await _in_request(
        session, broker, lambda sync: cancel_queued(sync, run=ref, now=utcnow(), reason=reason)
    )


async def answer_in_request(
    session: AsyncSession, *, broker: Broker, run_id: str, wait: int, answer_row: AnswerRow
) -> bool:
    """`answer` in the request's transaction (announced once it commits); False when the run
    no longer waits on wait number `wait`."""
    return await _in_request(
        session,
        broker,
        lambda sync: answer(sync, run_id=run_id, wait=wait, answer=answer_row, now=utcnow()),
    )


async def _cancel_waiting_in_request(
    session: AsyncSession, *, broker: Broker, run: Run, reason: CancelReason
) -> bool:
    """Cancel a run that waits for its caller (no worker holds it) in the request's
    transaction, billed what it used before its wait; False when it stopped waiting first."""
    ref, waits = _RunRef.of(run), run.waits
    ending = Ending(RunStatus.CANCELLED, usage=Usage.of(run), cancel_reason=reason)
    return await _in_request(
        session,
        broker,
        lambda sync: end_wait(sync, run=ref, ending=ending, waits=waits, now=utcnow()),
    )


async def request_cancel(
    session: AsyncSession,
    *,
    broker: Broker,
    run_id: str,
    reason: CancelReason = CancelReason.CLIENT,
) -> bool:
    """Flag a running run; its worker stops it at its next step (told once this commits)."""
    return await _in_request(
        session, broker, lambda sync: flag_cancel(sync, run_id=run_id, reason=reason)
    )


async def _in_request(
    session: AsyncSession, broker: Broker, move: Callable[[Session], Announcement | None]
) -> bool:
    """Write `move` in the request's transaction and announce it once that commits; False
    when it wrote nothing (the run moved on first)."""
    announcement = await session.run_sync(move)
    if announcement is None:
        return False
    _after_commit(session, lambda: announcement.send(broker))
    return True


def _after_commit(session: AsyncSession, callback: Callable[[], None]) -> None:
    """Run `callback` (synchronous, quick) after the request's session commits; forget it on
    rollback (services never commit, so they cannot announce "after" themselves)."""
    sync = session.sync_session
    callbacks: list[Callable[[], None]] | None = sync.info.get(_AFTER_COMMIT)
    if callbacks is None:
        callbacks = sync.info[_AFTER_COMMIT] = []
        if not event.contains(sync, "after_commit", _run_callbacks):
            event.listen(sync, "after_commit", _run_callbacks)
            event.listen(sync, "after_soft_rollback", _drop_callbacks)
    callbacks.append(callback)


def _run_callbacks(sync: Session) -> None:
    for callback in sync.info.pop(_AFTER_COMMIT, []):
        try:
            callback()
        except Exception:  # the commit stands; a lost notification only delays readers
            log.exception("after-commit callback failed")


def _drop_callbacks(sync: Session, _previous: Any) -> None:
    sync.info.pop(_AFTER_COMMIT, None)
