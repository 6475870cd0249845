"""Per-process state of the event streams: how many one key may hold open at once
(`ATRIUM_SSE_MAX_STREAMS_PER_KEY`), and the answers their key re-checks share.

A stream holds a connection (and a broker subscription) for minutes, so an unbounded number of
them per key would let one client exhaust the process. The count is per process: behind a
balancer each process enforces it for the streams it serves.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated

from fastapi import Depends, Request

from atrium.auth.key_rechecks import KeyRechecks
from atrium.runs.api.errors import StreamsPerKeyExceeded


class StreamSlots:
    """Open event streams per key id; `acquire` refuses the one past the limit."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: Counter[int] = Counter()

    def acquire(self, key_id: int) -> None:
        if self._open[key_id] >= self.limit:
            raise StreamsPerKeyExceeded(self.limit)
        self._open[key_id] += 1

    def release(self, key_id: int) -> None:
        self._open[key_id] -= 1
        if self._open[key_id] <= 0:
            del self._open[key_id]

    def open_streams(self, key_id: int) -> int:
        return self._open[key_id]


async def get_stream_slots(request: Request) -> StreamSlots:
    """The app's slots, made on first use from its settings (async: no thread hop)."""
    state = request.app.state
    slots: StreamSlots | None = getattr(state, "stream_slots", None)
    if slots is None:
        slots = StreamSlots(state.settings.sse_max_streams_per_key)
        state.stream_slots = slots
    return slots


StreamSlotsDep = Annotated[StreamSlots, Depends(get_stream_slots)]


async def get_key_rechecks(request: Request) -> KeyRechecks:
    """The app's shared key re-check answers, made on first use (async: no thread hop)."""
    state = request.app.state
    rechecks: KeyRechecks | None = getattr(state, "key_rechecks", None)
    if rechecks is None:
        rechecks = KeyRechecks(state.db, recheck_seconds=state.settings.sse_auth_recheck_seconds)
        state.key_rechecks = rechecks
    return rechecks


KeyRechecksDep = Annotated[KeyRechecks, Depends(get_key_rechecks)]
