"""W3C trace context: the `traceparent` a run continues, and the ids of the spans built for it.

Span ids are derived from the run and the event that opens the span, so building a run's spans
again (another process, a second export after a failure) gives the same ids: a collector that
receives a span twice receives the same span.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

# version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`; later versions may append
# fields after a dash, which a reader of version 00 ignores (W3C Trace Context, section 3.2.4).
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


@dataclass(frozen=True, slots=True)
class TraceParent:
    trace_id: str
    parent_id: str
    sampled: bool


def parsed_traceparent(header: str | None) -> TraceParent | None:
    """The header's context, or None when absent or invalid: an invalid one is ignored, as the
    W3C recommendation asks, and the run starts a trace of its own."""
    if header is None or len(header) > 512:
        return None
    match = _TRACEPARENT.match(header.strip())
    if match is None:
        return None
    version, trace_id, parent_id, flags, rest = match.groups()
    if version == "ff" or (version == "00" and rest is not None):
        return None
    if trace_id == "0" * 32 or parent_id == "0" * 16:
        return None
    return TraceParent(trace_id, parent_id, sampled=bool(int(flags, 16) & 1))


def stored_traceparent(header: str | None) -> str | None:
    """What `runs.traceparent` keeps of a request's header: its version 00 form, or None."""
    parent = parsed_traceparent(header)
    if parent is None:
        return None
    return f"00-{parent.trace_id}-{parent.parent_id}-{'01' if parent.sampled else '00'}"


def derived_id(*parts: str, hex_digits: int) -> str:
    """A stable id of `hex_digits` hex digits made from `parts` (never all zeros)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:hex_digits]
    return digest if digest.strip("0") else "1".rjust(hex_digits, "0")
