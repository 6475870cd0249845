"""The outbox: a finished run's deliveries, written in the transaction that finishes it.

So a delivery exists exactly when the run's terminal state committed: never for a run that
then rolled back, never lost to a crash between the commit and a send. The senders of this
process are woken after the commit; other processes find the rows by their poll.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from atrium.db.models import TERMINAL_EVENT, RunStatus
from atrium.kit.ids import new_id
from atrium.webhooks import repository

_wakers: weakref.WeakSet[Any] = weakref.WeakSet()


def _row(
    *, account_id: int, endpoint_id: str | None, run_id: str, event: str, url: str, now: datetime
) -> dict[str, Any]:
    return {
        "id": new_id("msg"),
        "account_id": account_id,
        "endpoint_id": endpoint_id,
        "run_id": run_id,
        "event": event,
        "url": url,
        "status": "pending",
        "attempts": 0,
        "next_attempt_at": now,
        "locked_until": None,
        "last_response_status": None,
        "last_response_body": None,
        "last_error": None,
        "payload": None,
        "created_at": now,
        "delivered_at": None,
    }


def _outcome_rows(
    endpoints: Sequence[tuple[str, str, list[str]]],
    *,
    account_id: int,
    run_id: str,
    status: RunStatus,
    run_webhook_url: str | None,
    now: datetime,
) -> list[dict[str, Any]]:
    event = TERMINAL_EVENT[status]
    targets: list[tuple[str | None, str]] = [
        (endpoint_id, url) for endpoint_id, url, events in endpoints if event in events
    ]
    if run_webhook_url:
        targets.append((None, run_webhook_url))
    return [
        _row(
            account_id=account_id,
            endpoint_id=endpoint_id,
            run_id=run_id,
            event=event,
            url=url,
            now=now,
        )
        for endpoint_id, url in targets
    ]


def record_run_outcome(
    session: Session,
    *,
    account_id: int,
    run_id: str,
    status: RunStatus,
    run_webhook_url: str | None,
    now: datetime,
) -> int:
    """Record one delivery per endpoint of the account that takes this event, plus one for the
    run's own `webhook_url`; how many. Call it inside the transaction that finishes the run
    (synchronous: the worker's writes are; an async session calls it through `run_sync`).

    One indexed read when the account has no endpoints (the hot path of every run).
    """
    endpoints = repository.subscribed_endpoints(session, account_id=account_id)
    rows = _outcome_rows(
        endpoints,
        account_id=account_id,
        run_id=run_id,
        status=status,
        run_webhook_url=run_webhook_url,
        now=now,
    )
    repository.insert_deliveries(session, rows)
    return len(rows)


def record_run_event(
    session: Session,
    *,
    account_id: int,
    run_id: str,
    event: str,
    run_webhook_url: str | None,
    now: datetime,
    payload: Callable[[], str],
) -> int:
    """`record_run_outcome` for an event the run moves on from (`run.requires_action`): the
    payload is rendered now, as the run is at this event, not when the delivery is sent."""
    endpoints = repository.subscribed_endpoints(session, account_id=account_id)
    targets: list[tuple[str | None, str]] = [
        (endpoint_id, url) for endpoint_id, url, events in endpoints if event in events
    ]
    if run_webhook_url:
        targets.append((None, run_webhook_url))
    if not targets:
        return 0
    body = payload()
    rows = [
        {
            **_row(
                account_id=account_id,
                endpoint_id=endpoint_id,
                run_id=run_id,
                event=event,
                url=url,
                now=now,
            ),
            "payload": body,
        }
        for endpoint_id, url in targets
    ]
    repository.insert_deliveries(session, rows)
    return len(rows)


def register_waker(waker: Any) -> None:
    """A sender of this process (anything with `wake()`), woken after deliveries commit."""
    _wakers.add(waker)


def unregister_waker(waker: Any) -> None:
    _wakers.discard(waker)


def wake_senders() -> None:
    """Tell this process's senders that deliveries were just committed."""
    for waker in list(_wakers):
        waker.wake()
