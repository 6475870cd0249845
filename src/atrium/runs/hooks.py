"""Work that must happen only once a transaction has committed (publish events, wake workers).

Services never commit, so they cannot publish "after" themselves; they register a callback on
the session, which runs when the request's transaction commits and is dropped on rollback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

log = logging.getLogger("atrium.runs")
_KEY = "atrium_after_commit"


def after_commit(session: AsyncSession, callback: Callable[[], None]) -> None:
    """Run `callback` (synchronous, quick) after `session` commits; forget it on rollback."""
    sync = session.sync_session
    callbacks: list[Callable[[], None]] | None = sync.info.get(_KEY)
    if callbacks is None:
        callbacks = sync.info[_KEY] = []
        if not event.contains(sync, "after_commit", _run_callbacks):
            event.listen(sync, "after_commit", _run_callbacks)
            event.listen(sync, "after_soft_rollback", _drop_callbacks)
    callbacks.append(callback)


def _run_callbacks(sync: Session) -> None:
    for callback in sync.info.pop(_KEY, []):
        try:
            callback()
        except Exception:  # the commit stands; a lost notification only delays readers
            log.exception("after-commit callback failed")


def _drop_callbacks(sync: Session, _previous: Any) -> None:
    sync.info.pop(_KEY, None)
