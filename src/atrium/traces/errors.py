"""The errors of a run's trace, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import NotFound


class TracedRunNotFound(NotFound):
    """The account has no run with the id (another account's is as unknown as none)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run with id {run_id[:64]!r}", details={"parameter": "run_id"})
