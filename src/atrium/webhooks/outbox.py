"""The outbox: a finished run's deliveries, written in the transaction that finishes it.

So a delivery exists exactly when the run's terminal state committed: never for a run that
then rolled back, never lost to a crash between the commit and a send. The senders of this
process are woken after the commit; other processes find the rows by their poll.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.orm import Session

from atrium.db.models import TERMINAL_EVENT, RunStatus
from atrium.kit.ids import new_id
from atrium.webhooks import repository
from atrium.webhooks.repository import NewDelivery

_wakers: weakref.WeakSet[Any] = weakref.WeakSet()


def _row(
    *,
    account_id: int,
    endpoint_id: str | None,
    run_id: str | None,
    event: str,
    url: str,
    now: datetime,
    payload: str | None,
) -> NewDelivery:
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
        "payload": payload,
        "created_at": now,
        "delivered_at": None,
    }


class RunOfEvent(Protocol):
    """The run an event is about: whose endpoints hear of it, and its own webhook."""

    @property
    def run_id(self) -> str: ...
    @property
    def account_id(self) -> int: ...
    @property
    def webhook_url(self) -> str | None: ...


def record_run_outcome(
    session: Session,
    *,
    run: RunOfEvent,
    status: RunStatus,
    now: datetime,
    has_endpoints: bool = True,
) -> int:
    """Record one delivery per endpoint of the account that takes this event, plus one for the
    run's own `webhook_url`; how many. Call it inside the transaction that finishes the run
    (synchronous: the worker's writes are; an async session calls it through `run_sync`).

    One indexed read of the account's endpoints; none with `has_endpoints=False`, which a
    caller passes only when a statement of this same transaction found the account has none
    (the worker's terminal UPDATE reads it: the hot path of every run).
    """
    return record_run_event(
        session, run=run, event=TERMINAL_EVENT[status], now=now, has_endpoints=has_endpoints
    )


def record_run_event(
    session: Session,
    *,
    run: RunOfEvent,
    event: str,
    now: datetime,
    payload: Callable[[], str] | None = None,
    has_endpoints: bool = True,
) -> int:
    """`record_run_outcome` for any event; with `payload`, for an event the run moves on from
    (`run.requires_action`): the payload is rendered now, as the run is at this event, not
    when the delivery is sent."""
    endpoints = (
        repository.subscribed_endpoints(session, account_id=run.account_id) if has_endpoints else []
    )
    targets: list[tuple[str | None, str]] = [
        (endpoint_id, url) for endpoint_id, url, events in endpoints if event in events
    ]
    if run.webhook_url:
        targets.append((None, run.webhook_url))
    if not targets:
        return 0
    body = None if payload is None else payload()
    rows = [
        _row(
            account_id=run.account_id,
            endpoint_id=endpoint_id,
            run_id=run.run_id,
            event=event,
            url=url,
            now=now,
            payload=body,
        )
        for endpoint_id, url in targets
    ]
    repository.insert_deliveries(session, rows)
    return len(rows)


def record_account_event(
    session: Session,
    *,
    account_id: int,
    event: str,
    payload: str,
    now: datetime,
    run_id: str | None = None,
) -> int:
    """Record one delivery of `payload` per endpoint of the account that takes `event` (one
    about the account rather than a run: `schedule.fired`, `schedule.skipped`); how many."""
    endpoints = repository.subscribed_endpoints(session, account_id=account_id)
    rows = [
        _row(
            account_id=account_id,
            endpoint_id=endpoint_id,
            run_id=run_id,
            event=event,
            url=url,
            now=now,
            payload=payload,
        )
        for endpoint_id, url, events in endpoints
        if event in events
    ]
    if rows:
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
