"""The errors of the threads routes, named; each keeps the status and code of its parent. An
unknown thread is the runs group's `ThreadNotFound` (`details.parameter`: `thread_id`)."""

from __future__ import annotations

from atrium.errors import InvalidParameter


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
