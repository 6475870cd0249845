"""The errors of evals, named; each keeps its parent's status and code."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class EvalNotFound(NotFound):
    """The account has no eval with the id (another account's is as unknown as none)."""

    def __init__(self, eval_id: str) -> None:
        super().__init__(f"no eval with id {eval_id!r}", details={"parameter": "eval_id"})


class EvalRefused(InvalidParameter):
    """The eval is not stored: a result names a run the account does not have, a run that is
    not finished, or an agent the eval does not list; `details.parameter` names the field
    (`cases.2.results.0.run_id`). Nothing of it is kept."""
