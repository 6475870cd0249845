"""Every move of the run lifecycle from every status, on a stored run: it happens exactly when
`transitions` allows it (the status changes and an event is written), and writes nothing
otherwise.

The run is put in each status with everything else a move checks holding (this worker's lease
on attempt 1, expired; wait number 1, open until later): only the status tells an allowed move
from a refused one, so a from-state an UPDATE allows beyond the table shows here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from atrium.db.engine import Database
from atrium.db.models import EventKind, Run, RunAction, RunEvent, RunStatus
from atrium.kit.time import utcnow
from atrium.runs import events, lifecycle
from atrium.runs.lifecycle import transitions
from atrium.runs.lifecycle.run_queue import ExpiredRun, release_thread
from atrium.runs.lifecycle.transitions import MOVES, TRANSITIONS, Move
from tests.runs.helpers import create_run

OWNER = "host:1:lifecycle"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"run_worker": False}  # the test makes every move itself


@dataclass(frozen=True, slots=True)
class Stored:
    """A run as a move sees it: its claim (lease, attempt), and its row's state."""

    claim: lifecycle.ClaimedRun
    status: RunStatus
    events: int
    cancel_requested: bool


async def _stored(db: Database, run_id: str) -> tuple[RunStatus, int, bool, int]:
    """(status, event count, cancel flag, answers) of the stored run."""
    async with db.session(write=False) as session:
        run = (await session.execute(select(Run).where(Run.id == run_id))).scalar_one()
        count = await session.scalar(select(func.count()).where(RunEvent.run_id == run_id))
        answers = await session.scalar(select(func.count()).where(RunAction.run_id == run_id))
        return RunStatus(run.status), int(count or 0), bool(run.cancel_requested), int(answers or 0)


async def _run_in(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, status: RunStatus
) -> Stored:
    """A run created through the API, claimed by `OWNER` (attempt 1), then put in `status`
    with its lease expired and its first wait open: every other condition of every move holds."""
    created = await create_run(client, auth, f"a {status} run")
    (claim,) = await db.write_sync(
        lambda session: lifecycle.claim(
            session, owner=OWNER, limit=1, lease_seconds=30, lock_rows=not db.sqlite
        )
    )
    assert claim.run_id == created["run_id"]
    now = utcnow()

    def put(session: Session) -> None:
        session.execute(
            update(Run)
            .where(Run.id == claim.run_id)
            .values(
                status=status,
                waits=1,
                action_expires_at=now + timedelta(hours=1),
                lease_expires_at=now - timedelta(seconds=1),
            )
        )
        if status != RunStatus.RUNNING:  # only a running run holds its thread
            release_thread(session, thread_id=claim.thread_id, run_id=claim.run_id)

    await db.write_sync(put)
    stored_status, count, flag, _ = await _stored(db, claim.run_id)
    assert stored_status == status
    return Stored(replace(claim, waits=1), status, count, flag)


def _ending(to: RunStatus) -> lifecycle.Ending:
    return lifecycle.Ending(to, error_code="X" if to == RunStatus.FAILED else None)


def _next_row(run: Stored, kind: EventKind, payload: dict[str, Any]) -> dict[str, Any]:
    """The run's next event (its worker's numbering: the stored claim's sequence + 1)."""
    return events.event_row(run.claim.run_id, run.claim.last_event_seq + 1, kind, payload, utcnow())


Apply = Callable[[Database, FastAPI, Stored, RunStatus | None], Awaitable[Any]]


def _sync(work: Callable[[Session, Stored, RunStatus | None], Any]) -> Apply:
    async def apply(db: Database, _app: FastAPI, run: Stored, to: RunStatus | None) -> Any:
        return await db.write_sync(lambda session: work(session, run, to))

    return apply


def _claim(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    claimed = lifecycle.claim(
        session,
        owner=OWNER,
        limit=10,
        lease_seconds=30,
        lock_rows=session.get_bind().dialect.name == "postgresql",
    )
    return [each for each in claimed if each.run_id == run.claim.run_id] or None


def _finish(session: Session, run: Stored, to: RunStatus | None) -> Any:
    assert to is not None
    ending = _ending(to)
    row = _next_row(run, *ending.event())
    return lifecycle.finish(
        session, run=run.claim, owner=OWNER, ending=ending, rows=[row], now=utcnow()
    )


def _wait(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    waiting = lifecycle.Waiting([], utcnow() + timedelta(hours=1), None, lifecycle.Usage())
    required = waiting.required_action()
    row = _next_row(run, EventKind.REQUIRES_ACTION, {"required_action": required})
    return lifecycle.wait(
        session,
        run=run.claim,
        owner=OWNER,
        waiting=waiting,
        rows=[row],
        payload=lambda _session: "{}",
        now=utcnow(),
    )


def _answer(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    answer = {
        "run_id": run.claim.run_id,
        "wait": 1,
        "tool_calls": [],
        "answers": {},
        "request_hash": "0" * 64,
    }
    return lifecycle.answer(session, run_id=run.claim.run_id, wait=1, answer=answer, now=utcnow())


def _end_wait(session: Session, run: Stored, to: RunStatus | None) -> Any:
    assert to is not None
    return lifecycle.end_wait(session, run=run.claim, ending=_ending(to), waits=1, now=utcnow())


def _cancel_queued(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    return lifecycle.cancel_queued(session, run=run.claim, now=utcnow())


def _requeue(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    return lifecycle.requeue(
        session, run_id=run.claim.run_id, owner=OWNER, expired_before=None, reason="test"
    )


def _fail_lost(session: Session, run: Stored, _to: RunStatus | None) -> Any:
    claim = run.claim
    expired = ExpiredRun(
        run_id=claim.run_id,
        thread_id=claim.thread_id,
        account_id=claim.account_id,
        agent_id=claim.agent_id,
        attempts=claim.attempt,
        lease_owner=OWNER,
        webhook_url=None,
    )
    return lifecycle.fail_lost(session, run=expired, now=utcnow())


async def _request_cancel(db: Database, app: FastAPI, run: Stored, _to: RunStatus | None) -> Any:
    async with db.transaction() as session:
        flagged = await lifecycle.request_cancel(
            session, broker=app.state.broker, run_id=run.claim.run_id
        )
    return flagged or None


APPLY: dict[str, Apply] = {
    "claim": _sync(_claim),
    "finish": _sync(_finish),
    "wait": _sync(_wait),
    "answer": _sync(_answer),
    "end_wait": _sync(_end_wait),
    "cancel_queued": _sync(_cancel_queued),
    "requeue": _sync(_requeue),
    "fail_lost": _sync(_fail_lost),
    "request_cancel": _request_cancel,
}

# Every move to each of its statuses (a move that changes no status: once, to None) ...
_MOVES_TO = [(move, to) for move in MOVES for to in (move.targets or (None,))]
# ... from every status.
CASES = [
    pytest.param(status, move, to, id=f"{move.name}-{status}-to-{to or 'same'}")
    for move, to in _MOVES_TO
    for status in RunStatus
]


def test_every_move_is_tried() -> None:
    assert set(APPLY) == {move.name for move in MOVES}


def test_the_table_is_the_documented_machine() -> None:
    """The diagram of `runs.lifecycle.moves`, edge for edge."""
    queued, running, waiting = RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.REQUIRES_ACTION
    completed, failed, cancelled = RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED
    assert {
        queued: {running, cancelled},
        running: {queued, waiting, completed, failed, cancelled},
        waiting: {queued, cancelled, failed},
        completed: set(),
        failed: set(),
        cancelled: set(),
    } == TRANSITIONS


@pytest.mark.parametrize(("status", "move", "to"), CASES)
async def test_a_move_happens_exactly_when_the_table_allows_it(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    app: FastAPI,
    status: RunStatus,
    move: Move,
    to: RunStatus | None,
) -> None:
    run = await _run_in(client, auth, db, status)
    # The move's entry in the table, which `TRANSITIONS` adds up.
    allowed = status in move.sources
    assert not allowed or to is None or to in TRANSITIONS[status]

    result = await APPLY[move.name](db, app, run, to)

    after, count, flag, answers = await _stored(db, run.claim.run_id)
    if not allowed:
        assert result is None
        assert (after, count, flag, answers) == (status, run.events, run.cancel_requested, 0)
    elif to is None:  # a flag for the run's worker: no status, no event
        assert result is not None
        assert (after, count, flag) == (status, run.events, True)
    else:
        assert result is not None
        assert after == to
        assert count > run.events


def test_a_cancel_picks_the_move_of_the_run_status() -> None:
    picked = {status: transitions.cancel_move(status) for status in RunStatus}
    assert picked == {
        RunStatus.QUEUED: transitions.CANCEL_QUEUED,
        RunStatus.RUNNING: transitions.REQUEST_CANCEL,
        RunStatus.REQUIRES_ACTION: transitions.END_WAIT,
        RunStatus.COMPLETED: None,
        RunStatus.FAILED: None,
        RunStatus.CANCELLED: None,
    }


def test_a_run_cancelled_as_it_stopped_to_wait_ends_cancelled() -> None:
    after = transitions.after_execution
    waiting = RunStatus.REQUIRES_ACTION
    assert after(waiting, cancel_requested=False) == waiting
    assert after(waiting, cancel_requested=True) == RunStatus.CANCELLED
    for ended in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED):
        assert after(ended, cancel_requested=True) == ended
