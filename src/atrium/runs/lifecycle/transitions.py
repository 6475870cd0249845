"""The run's state machine as data: each named move with the statuses it starts from and the
statuses it leads to, and `TRANSITIONS`, the allowed from -> to pairs they add up to.

The conditional UPDATEs of `run_queue` and `waiting_runs` take their `status IN (…)` from a
move's `sources`, and `moves` takes the status it writes from the move's `to`: the table is the
one place a from-state can be allowed (tests/runs/test_lifecycle.py tries every move from every
status on a stored run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from atrium.db.models import RunStatus

QUEUED = RunStatus.QUEUED
RUNNING = RunStatus.RUNNING
REQUIRES_ACTION = RunStatus.REQUIRES_ACTION
COMPLETED = RunStatus.COMPLETED
FAILED = RunStatus.FAILED
CANCELLED = RunStatus.CANCELLED


@dataclass(frozen=True, slots=True)
class Move:
    """A named move: from any of `sources` to one of `targets` (none: the status stays, only
    a flag changes)."""

    name: str
    sources: tuple[RunStatus, ...]
    targets: tuple[RunStatus, ...]

    def to(self, status: RunStatus) -> RunStatus:
        """`status`, if this move may lead there (a programming error otherwise)."""
        if status not in self.targets:
            raise ValueError(f"{self.name} cannot make a run {status}")
        return status

    @property
    def target(self) -> RunStatus:
        """The one status this move leads to."""
        (only,) = self.targets
        return only


CLAIM: Final = Move("claim", (QUEUED,), (RUNNING,))
FINISH: Final = Move("finish", (RUNNING,), (COMPLETED, FAILED, CANCELLED))
WAIT: Final = Move("wait", (RUNNING,), (REQUIRES_ACTION,))
ANSWER: Final = Move("answer", (REQUIRES_ACTION,), (QUEUED,))
# The caller cancelled the waiting run, or its wait expired (ACTION_EXPIRED).
END_WAIT: Final = Move("end_wait", (REQUIRES_ACTION,), (CANCELLED, FAILED))
CANCEL_QUEUED: Final = Move("cancel_queued", (QUEUED,), (CANCELLED,))
# Recovery: the worker was lost (its lease expired) or is stopping and hands its runs back.
REQUEUE: Final = Move("requeue", (RUNNING,), (QUEUED,))
# The lease expired on the last allowed attempt.
FAIL_LOST: Final = Move("fail_lost", (RUNNING,), (FAILED,))
# Flags a running run; its worker makes the move (`FINISH` to cancelled) at its next step.
REQUEST_CANCEL: Final = Move("request_cancel", (RUNNING,), ())

MOVES: Final = (
    CLAIM,
    FINISH,
    WAIT,
    ANSWER,
    END_WAIT,
    CANCEL_QUEUED,
    REQUEUE,
    FAIL_LOST,
    REQUEST_CANCEL,
)

# The allowed moves, from -> to. A terminal status has none: a finished run never changes.
TRANSITIONS: Final[dict[RunStatus, frozenset[RunStatus]]] = {
    status: frozenset(to for move in MOVES if status in move.sources for to in move.targets)
    for status in RunStatus
}

# The status in which a worker holds a run's lease (where a claim puts it): its checkpoints and
# lease renewals apply only there.
LEASED: Final = CLAIM.targets

# What a cancel request does, by the run's status: a queued or waiting run (no worker holds it)
# ends at once; a running one is flagged for its worker.
_CANCELS: Final = (CANCEL_QUEUED, END_WAIT, REQUEST_CANCEL)


def cancel_move(status: RunStatus) -> Move | None:
    """The move a cancel request makes on a run in `status`; None for a finished run."""
    return next((move for move in _CANCELS if status in move.sources), None)


def after_execution(status: RunStatus, *, cancel_requested: bool) -> RunStatus:
    """What a run becomes once its execution returned `status` (terminal, or requires_action):
    a run cancelled as it stopped to wait for its caller ends cancelled instead."""
    if status == REQUIRES_ACTION and cancel_requested:
        return FINISH.to(CANCELLED)
    return status
