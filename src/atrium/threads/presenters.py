"""Rows -> response bodies of the threads routes."""

from __future__ import annotations

from atrium.kit.time import isoformat
from atrium.threads.schemas import ForkedFrom, LastRun, ThreadCounts, ThreadOut
from atrium.threads.service import ThreadView


def thread_out(view: ThreadView) -> ThreadOut:
    thread, last = view.thread, view.tally.last_run
    return ThreadOut(
        id=thread.id,
        created_at=isoformat(thread.created_at),
        metadata=thread.thread_metadata or {},
        status=view.status,
        last_run=None
        if last is None
        else LastRun(
            id=last.id,
            status=last.status,
            agent_id=last.agent_id,
            created_at=isoformat(last.created_at),
        ),
        counts=None
        if view.messages is None
        else ThreadCounts(runs=view.tally.runs, messages=view.messages),
        forked_from=None
        if thread.forked_from_thread_id is None
        else ForkedFrom(thread_id=thread.forked_from_thread_id, run_id=thread.forked_from_run_id),
    )
