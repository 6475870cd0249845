"""What stops a run: pydantic-ai's cancellation token, which also reaches a single request.

An agent run registers itself with its token, and `cancel()` cancels the task that drives it
(pydantic-ai then raises `RunCancelled`). A run answered by one model request
(`runtime/answer.py`) makes that request outside an agent run, so nothing is registered: it
hands the token the cancel scope of its request instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio
from pydantic_ai import CancellationToken


class RunCancellation(CancellationToken):
    """A run's token. `cancel()` is called on the run's event loop (the worker's)."""

    def __init__(self) -> None:
        super().__init__()
        self._scope: anyio.CancelScope | None = None

    def cancel(self) -> None:
        super().cancel()
        if self._scope is not None:
            self._scope.cancel()

    @contextmanager
    def scope(self, *, seconds: float) -> Iterator[anyio.CancelScope]:
        """A cancel scope that `cancel()` cancels (at once if it was called before) and that
        ends after `seconds`; `cancelled_caught` tells it stopped, `cancelled` which way."""
        with anyio.CancelScope(deadline=anyio.current_time() + seconds) as scope:
            self._scope = scope
            if self.cancelled:
                scope.cancel()
            try:
                yield scope
            finally:
                self._scope = None
