"""One part of a run's history, as the claim reads it and compaction cuts it.

Kept apart from `compaction` (which brings pydantic-ai) so that the runs' SQL modules, which
every API process imports, can build parts without loading the agent library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class HistoryPart:
    """The latest summary, a fork's base, or a run's messages (`run_id` set only for a run's),
    as pydantic-ai JSON messages."""

    run_id: str | None
    messages: list[Any]
    summary: bool = False
