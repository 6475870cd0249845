"""The errors of the runs group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import Conflict, NotFound, RateLimited


class RunNotFound(NotFound):
    """The account has no run with the id (another account's is as unknown as none)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run with id {run_id!r}", details={"parameter": "run_id"})


class ThreadNotFound(NotFound):
    """The account has no thread with the `thread_id`."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"no thread with id {thread_id!r}", details={"parameter": "thread_id"})


class ArtifactNotFound(NotFound):
    """The run has no artifact with the id."""

    def __init__(self, artifact_id: str) -> None:
        message = f"no artifact with id {artifact_id!r} in this run"
        super().__init__(message, details={"parameter": "artifact_id"})


class IdempotencyKeyReused(Conflict):
    """The `Idempotency-Key` was already used with another request body; `details.run_id` is
    the run it made."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            "Idempotency-Key was already used with a different request body",
            details={"parameter": "Idempotency-Key", "run_id": run_id},
        )


class RunAlreadyFinished(Conflict):
    """The run is already completed, failed or cancelled (`details.status`)."""

    def __init__(self, run_id: str, status: str) -> None:
        details = {"run_id": run_id, "status": status}
        super().__init__(f"run is already {status}", details=details)


class ThreadBusy(Conflict):
    """The thread has an unfinished run (queued, running or `requires_action`) and the create
    said `if_busy: "reject"`; nothing was stored."""

    code = "THREAD_BUSY"

    def __init__(self, thread_id: str) -> None:
        super().__init__(
            "the thread has an unfinished run",
            details={"parameter": "thread_id", "thread_id": thread_id},
        )


class RunNotWaiting(Conflict):
    """The run is not waiting for actions: it never was, another answer won, or the wait
    expired (the message says which; `details.status` is the run's)."""

    def __init__(self, message: str, *, run_id: str, status: str) -> None:
        super().__init__(message, details={"run_id": run_id, "status": status})


class StreamsPerKeyExceeded(RateLimited):
    """The key already has `ATRIUM_SSE_MAX_STREAMS_PER_KEY` event streams open; retry once one
    closes."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"this key already has {limit} event streams open; close one first",
            details={"limit": limit, "parameter": "streams"},
            headers={"Retry-After": "1"},
        )
