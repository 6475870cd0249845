"""Rules of the threads routes: create, list, read, fork and delete a thread, and page its
conversation.

Services never commit: a request's session does. Deleting is the exception that needs time
between its steps (cancel, let a running run end, delete): it opens its own transactions.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents.versions.resolve import version_filter
from atrium.db.engine import Database
from atrium.db.models import CancelReason, RunStatus, Thread, ThreadSummary
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import known_id, looks_like_id, new_id
from atrium.kit.time import utcnow
from atrium.providers.targets import target_of
from atrium.runs import lifecycle
from atrium.runs.api.errors import ThreadBusy, ThreadNotFound
from atrium.runs.api.service import checked_metadata
from atrium.runs.events.broker import Broker
from atrium.settings import Settings
from atrium.threads import conversation, deletion, repository
from atrium.threads.errors import (
    CompactionModelFailed,
    ForkPointNotInHistory,
    MetadataFilterInvalid,
)
from atrium.threads.repository import RunTally
from atrium.threads.schemas import ThreadCreate, ThreadFork

if TYPE_CHECKING:
    from atrium.runtime.executor import Runtime

# `metadata[key]=value` filters of the list.
_METADATA_FILTER: Final = re.compile(r"^metadata\[(.*)\]$", re.DOTALL)
MAX_METADATA_FILTERS: Final = 8
# A filter's key: characters that SQLite's JSON paths and PostgreSQL's `->>` both take as they
# are (SQLite's path matches a quote, a backslash or a non-ASCII key never, PostgreSQL's does).
METADATA_KEY_PATTERN: Final = r"^[A-Za-z0-9 _.:/@+-]{1,64}$"
_METADATA_KEY: Final = re.compile(METADATA_KEY_PATTERN)
MAX_METADATA_VALUE: Final = 512
# A deleted thread's running run is flagged; its worker stops it at its next step (told
# through the broker at once) and records what it used, which billing keeps. Past this, the
# rows go anyway: a run stuck in a tool call writes nothing once they are gone (`deletion`).
RUNNING_RUN_GRACE_SECONDS: Final = 5.0
_GRACE_POLL_SECONDS: Final = 0.05


@dataclass(frozen=True, slots=True)
class ThreadView:
    """A thread and what its body shows with it: its runs' tally, its item count (None in
    lists)."""

    thread: Thread
    tally: RunTally
    messages: int | None = None

    @property
    def status(self) -> str:
        statuses = self.tally.statuses
        if RunStatus.REQUIRES_ACTION in statuses:
            return "requires_action"
        if RunStatus.QUEUED in statuses or RunStatus.RUNNING in statuses:
            return "busy"
        return "idle"


@dataclass(frozen=True, slots=True)
class ThreadPage:
    views: list[ThreadView]
    next_cursor: str | None


def metadata_filters(query: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The `metadata[key]=value` pairs of a list's query string: a 400 naming the parameter
    for a malformed one (`metadata` alone, an empty, long or repeated key, too many)."""
    filters: dict[str, str] = {}
    for name, value in query:
        if not name.startswith("metadata"):
            continue
        match = _METADATA_FILTER.fullmatch(name)
        if match is None:
            raise MetadataFilterInvalid(
                name, f"{name} is not a filter: use metadata[<key>]=<value>"
            )
        key = match.group(1)
        if not _METADATA_KEY.fullmatch(key):
            raise MetadataFilterInvalid(
                name,
                "a metadata filter's key is 1-64 letters, digits, spaces and _ . : / @ + -",
            )
        if key in filters:
            raise MetadataFilterInvalid(name, f"{name} is given more than once")
        if len(value) > MAX_METADATA_VALUE or "\x00" in value:
            raise MetadataFilterInvalid(
                name, f"a metadata filter's value is at most {MAX_METADATA_VALUE} characters"
            )
        filters[key] = value
        if len(filters) > MAX_METADATA_FILTERS:
            raise MetadataFilterInvalid(
                name, f"at most {MAX_METADATA_FILTERS} metadata filters at once"
            )
    return filters


async def get_thread(session: AsyncSession, *, account_id: int, thread_id: str) -> Thread:
    thread = await repository.thread_of_account(
        session, account_id=account_id, thread_id=known_id(thread_id, ThreadNotFound)
    )
    if thread is None:
        raise ThreadNotFound(thread_id)
    return thread


async def _view(session: AsyncSession, thread: Thread) -> ThreadView:
    tallies = await repository.run_tallies(session, [thread.id])
    messages = await conversation.count(session, thread=thread)
    return ThreadView(thread, tallies[thread.id], messages)


async def thread_view(session: AsyncSession, *, account_id: int, thread_id: str) -> ThreadView:
    """The thread as `GET /threads/{thread_id}` shows it."""
    thread = await get_thread(session, account_id=account_id, thread_id=thread_id)
    return await _view(session, thread)


async def create_thread(
    session: AsyncSession, *, settings: Settings, account_id: int, data: ThreadCreate
) -> ThreadView:
    """A new, empty thread."""
    now = utcnow()
    thread = Thread(
        id=new_id("thr"),
        account_id=account_id,
        thread_metadata=checked_metadata(settings, data.metadata),
        created_at=now,
        updated_at=now,
    )
    await repository.add_thread(session, thread)
    return ThreadView(thread, RunTally(), 0)


async def list_threads(
    session: AsyncSession,
    *,
    account_id: int,
    agent_id: str | None,
    metadata: dict[str, str],
    limit: int,
    cursor: str | None,
) -> ThreadPage:
    """A page of the account's threads, newest first, and the cursor of the next page.
    `agent_id` may name a version (`agt_…@3` or `agt_…@v3`): threads with a run of it."""
    before = decode_cursor(cursor) if cursor else None
    agent_version = None
    if agent_id is not None:
        wanted = version_filter(agent_id)
        if wanted is None or not looks_like_id(wanted[0]):
            return ThreadPage([], None)  # no run has such an agent or version
        agent_id, agent_version = wanted
    rows = await repository.list_threads(
        session,
        account_id=account_id,
        agent_id=agent_id,
        agent_version=agent_version,
        metadata=metadata,
        before=before,
        limit=limit + 1,
    )
    threads, next_cursor = split_page(rows, limit)
    # The SQL compares values as text; a filter matches string values only (a number 5 is
    # not "5": PostgreSQL and SQLite would disagree on it otherwise).
    shown = [thread for thread in threads if _has_strings(thread.thread_metadata, metadata)]
    tallies = await repository.run_tallies(session, [thread.id for thread in shown])
    return ThreadPage([ThreadView(thread, tallies[thread.id]) for thread in shown], next_cursor)


def _has_strings(metadata: dict[str, Any], wanted: dict[str, str]) -> bool:
    return all(metadata.get(key) == value for key, value in wanted.items())


async def messages_page(
    session: AsyncSession, *, account_id: int, thread_id: str, limit: int, cursor: str | None
) -> conversation.Page:
    """A page of the thread's conversation, oldest first."""
    after = conversation.decode_cursor(cursor) if cursor else None
    thread = await get_thread(session, account_id=account_id, thread_id=thread_id)
    return await conversation.page(session, thread=thread, after=after, limit=limit)


async def fork_thread(
    session: AsyncSession,
    *,
    settings: Settings,
    account_id: int,
    thread_id: str,
    data: ThreadFork,
) -> ThreadView:
    """A new thread whose base is the thread's history up to and including `at_run_id`
    (default: its last run in history); the original is not changed."""
    original = await get_thread(session, account_id=account_id, thread_id=thread_id)
    metadata = (
        dict(original.thread_metadata)
        if data.metadata is None
        else checked_metadata(settings, data.metadata)
    )
    at = await _fork_point(session, thread=original, run_id=data.at_run_id)
    now = utcnow()
    thread = Thread(
        id=new_id("thr"),
        account_id=account_id,
        thread_metadata=metadata,
        forked_from_thread_id=original.id,
        forked_from_run_id=None if at is None else at[1],
        base_messages=await conversation.history_up_to(session, thread=original, through=at),
        created_at=now,
        updated_at=now,
    )
    await repository.add_thread(session, thread)
    return await _view(session, thread)


async def _fork_point(
    session: AsyncSession, *, thread: Thread, run_id: str | None
) -> tuple[Any, str] | None:
    """(created_at, id) of the run a fork is made at: the named one, which must be in the
    thread's history, or the thread's last run in history (None: it has none)."""
    if run_id is None:
        runs = await repository.runs_in_history(session, thread_id=thread.id)
        return None if not runs else (runs[-1].created_at, runs[-1].id)
    found = await repository.history_position(
        session, thread_id=thread.id, run_id=known_id(run_id, ForkPointNotInHistory)
    )
    if found is None:
        raise ForkPointNotInHistory(run_id)
    return found


async def delete_thread(db: Database, *, broker: Broker, account_id: int, thread_id: str) -> str:
    """Delete the thread and everything of it but usage: its unfinished runs are cancelled
    first (`cancel_reason` thread_deleted, through the lifecycle's cancel), a running one is
    given up to `RUNNING_RUN_GRACE_SECONDS` to end, then the rows go (`deletion`)."""
    async with db.transaction() as session:
        thread = await get_thread(session, account_id=account_id, thread_id=thread_id)
        for run in await repository.unfinished_runs(session, thread_id=thread.id):
            await lifecycle.cancel(
                session, broker=broker, run=run, reason=CancelReason.THREAD_DELETED
            )
    await _until_nothing_runs(db, thread_id=thread.id)
    await deletion.delete_threads(db, [thread.id])
    return thread.id


async def _until_nothing_runs(db: Database, *, thread_id: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + RUNNING_RUN_GRACE_SECONDS
    while True:
        async with db.session(write=False) as session:
            running = await repository.running_count(session, thread_id=thread_id)
        if not running or loop.time() >= deadline:
            return
        await asyncio.sleep(_GRACE_POLL_SECONDS)


async def compact_thread(
    db: Database, *, runtime: Runtime, settings: Settings, account_id: int, thread_id: str
) -> ThreadSummary | None:
    """Summarise the thread's history but its newest runs now (`runs.thread_compaction`), on
    the model of its newest run; None when nothing is old enough. A busy thread is a 409: its
    running run reads the history this would change."""
    from atrium.runs.thread_compaction import Position, compact  # brings pydantic-ai

    async with db.session(write=False) as session:
        thread = await get_thread(session, account_id=account_id, thread_id=thread_id)
        if await repository.unfinished_runs(session, thread_id=thread.id):
            raise ThreadBusy(thread.id)
        config = await repository.last_run_config(session, thread_id=thread.id)
    if config is None:
        return None
    model = str(config.get("model") or "")
    target = None
    if not runtime.models.is_registered(model):
        target = await target_of(db, settings, account_id=account_id, model=model)
    # Read as a run created now would: after every run of the thread.
    position = Position(thread.id, run_id="", created_at=utcnow())
    try:
        compacted = await compact(
            db, runtime, position=position, config=config, target=target, force=True
        )
    except Exception as exc:
        ended = runtime.outcome_of(exc)
        if ended is None:
            raise
        raise CompactionModelFailed(
            ended.error_code or "MODEL_ERROR", ended.error_message or "the model failed"
        ) from exc
    return None if compacted is None else compacted.summary
