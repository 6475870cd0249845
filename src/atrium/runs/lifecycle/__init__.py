"""The run lifecycle: every move of a run's status (`moves`), and the SQL those moves arbitrate
races with (`run_queue` for the queue and leases, `waiting_runs` for runs waiting for their
caller)."""

from atrium.runs.lifecycle.moves import (
    Announcement,
    ClaimedRun,
    Ending,
    Usage,
    Waiting,
    answer,
    answer_in_request,
    cancel,
    cancel_queued,
    claim,
    create,
    end_wait,
    fail_lost,
    finish,
    request_cancel,
    requeue,
    wait,
)

__all__ = [
    "Announcement",
    "ClaimedRun",
    "Ending",
    "Usage",
    "Waiting",
    "answer",
    "answer_in_request",
    "cancel",
    "cancel_queued",
    "claim",
    "create",
    "end_wait",
    "fail_lost",
    "finish",
    "request_cancel",
    "requeue",
    "wait",
]
