"""What every transaction that makes a run terminal writes besides the run: usage, deliveries.

Three places finish a run: the worker (its outcome), recovery (`WORKER_LOST`) and the API
(cancelling a queued run). Each must count the run once in the usage rollup and record its
webhook deliveries in the same transaction as the terminal state, so both exist exactly when
that state committed. This is the one function they call.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from atrium.analytics.service import record_run_usage
from atrium.webhooks import outbox


def record_terminal(
    session: Session,
    *,
    account_id: int,
    agent_id: str,
    run_id: str,
    status: str,
    webhook_url: str | None,
    now: datetime,
    input_tokens: int = 0,
    output_tokens: int = 0,
    credits_micro: int = 0,
    requests: int = 0,
) -> int:
    """Count the finished run and record its deliveries; how many deliveries (synchronous: the
    worker's writes are; an async session calls it through `run_sync`)."""
    record_run_usage(
        session,
        account_id=account_id,
        agent_id=agent_id,
        day=now.date(),
        status=status,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        credits_micro=credits_micro,
        requests=requests,
    )
    return outbox.record_run_outcome(
        session,
        account_id=account_id,
        run_id=run_id,
        status=status,
        run_webhook_url=webhook_url,
        now=now,
    )
