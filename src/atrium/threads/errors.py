"""The errors of the threads routes, named; each keeps the status and code of its parent. An
unknown thread is the runs group's `ThreadNotFound` (`details.parameter`: `thread_id`)."""

from __future__ import annotations

from atrium.errors import AppError, InvalidParameter


class ForkPointNotInHistory(InvalidParameter):
    """`at_run_id` is not a run of the thread whose messages are in its history (a completed
    run): a fork starts from a conversation the model saw."""

    def __init__(self, run_id: str) -> None:
        super().__init__("at_run_id", f"run {run_id[:64]!r} is not a run in this thread's history")


class MetadataFilterInvalid(InvalidParameter):
    """A `metadata[key]=value` filter of the threads list is malformed: the query parameter is
    not `metadata[<key>]`, its key is not 1-64 letters, digits, spaces and `_ . : / @ + -`, or is
    given twice, its value is over 512 characters, or there are more than 8."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(parameter[:80], message)


class CompactionModelFailed(AppError):
    """The model failed the summarising request of `POST /threads/{id}/compact` (its provider
    answered an error, could not be reached or took longer than the run timeout): nothing was
    stored, the thread is as it was. `details.error_code` is the code a run would fail with."""

    status_code = 502
    code = "MODEL_ERROR"

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message, details={"error_code": error_code})
