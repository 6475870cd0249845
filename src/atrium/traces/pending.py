"""The runs whose spans may be exported now: a lifecycle move that committed a wait or a
terminal state tells this process's exporter (none runs unless `ATRIUM_OTLP_ENDPOINT` is set,
and then this costs a set lookup)."""

from __future__ import annotations

from typing import Final, Protocol

# The events after which a run has spans to send: a wait ends a stretch of execution, a
# terminal event the run.
EXPORT_POINTS: Final = frozenset(
    {"run.requires_action", "run.completed", "run.failed", "run.cancelled"}
)


class Notified(Protocol):
    def notify(self, run_id: str) -> None: ...


_exporters: set[Notified] = set()


def register(exporter: Notified) -> None:
    _exporters.add(exporter)


def unregister(exporter: Notified) -> None:
    _exporters.discard(exporter)


def committed(run_id: str, kinds: list[str]) -> None:
    """Events of `kinds` were just committed for the run."""
    if _exporters and not EXPORT_POINTS.isdisjoint(kinds):
        for exporter in list(_exporters):
            exporter.notify(run_id)
