"""Rules of the runs API: creating (idempotently), reading, listing and cancelling runs.

Services never commit: the request's session does. Everything others must hear about (events,
wake-ups, cancel requests) is published from an after-commit hook, so nobody is told about a
run that then fails to commit.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents import repository as agents_repository
from atrium.agents.repository import AgentForRun
from atrium.agents.service import agent_not_found, get_or_create_default_agent
from atrium.db.engine import Database
from atrium.db.models import Artifact, Run
from atrium.errors import Conflict, InvalidParameter, NotFound
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from atrium.runs import events, repository
from atrium.runs.broker import Broker
from atrium.runs.hooks import after_commit
from atrium.runs.schemas import STATUSES, TERMINAL_STATUSES, RunCreate
from atrium.runs.terminal import record_terminal
from atrium.settings import Settings
from atrium.webhooks import outbox, signing
from atrium.webhooks.service import checked_url
from atrium.worker.batcher import WriteBatcher

MAX_IDEMPOTENCY_KEY = 200
MAX_ID_LENGTH = 40
# What `new_id` makes; anything else (NUL, surrogates: PostgreSQL refuses them) is unknown.
_ID = re.compile(rf"^[A-Za-z0-9_-]{{1,{MAX_ID_LENGTH}}}$")


@dataclass(frozen=True, slots=True)
class CreatedRun:
    run: Run
    replayed: bool


def _not_found(run_id: str) -> NotFound:
    return NotFound(f"no run with id {run_id!r}", details={"parameter": "run_id"})


def _request_hash(data: RunCreate) -> str:
    # Without a webhook_url the body hashes as before the field existed (stored keys still match).
    body = data.model_dump(exclude={"webhook_url"} if data.webhook_url is None else None)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _storable(value: str) -> bool:
    """Text a database can hold: no NUL (PostgreSQL), no lone surrogates (UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


def _checked_prompt(settings: Settings, prompt: str) -> str:
    if not prompt.strip():
        raise InvalidParameter("prompt", "prompt must not be blank")
    if not _storable(prompt):
        raise InvalidParameter("prompt", "prompt must be Unicode text without NUL characters")
    if len(prompt) > settings.run_max_prompt_chars:
        raise InvalidParameter(
            "prompt", f"prompt is longer than {settings.run_max_prompt_chars} characters"
        )
    return prompt


def _checked_metadata(settings: Settings, metadata: dict[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    try:
        encoded = json.dumps(metadata, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        size = len(encoded.encode())
    except (ValueError, UnicodeEncodeError):  # NaN/Infinity, lone surrogates
        raise InvalidParameter(
            "metadata", "metadata must be JSON with finite numbers and Unicode text"
        ) from None
    if "\\u0000" in encoded:
        raise InvalidParameter("metadata", "metadata must not contain NUL characters")
    if size > settings.run_max_metadata_bytes:
        raise InvalidParameter(
            "metadata", f"metadata is larger than {settings.run_max_metadata_bytes} bytes as JSON"
        )
    return metadata


def _checked_idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable():
        raise InvalidParameter(
            "Idempotency-Key",
            f"Idempotency-Key must be 1-{MAX_IDEMPOTENCY_KEY} printable characters",
        )
    return key


def _replay(existing: Run, request_hash: str) -> CreatedRun:
    if existing.request_hash != request_hash:
        raise Conflict(
            "Idempotency-Key was already used with a different request body",
            details={"parameter": "Idempotency-Key", "run_id": existing.id},
        )
    return CreatedRun(existing, replayed=True)


async def create_run(
    *,
    db: Database,
    writer: WriteBatcher,
    settings: Settings,
    broker: Broker,
    account_id: int,
    data: RunCreate,
    idempotency_key: str | None,
) -> CreatedRun:
    """Queue a run. The same Idempotency-Key and body return the first run again.

    The lookups are point reads and the rows (thread, run, `run.queued` event) one synchronous
    write handed to the process's write batcher: a burst of creates commits in a few
    transactions instead of holding the one SQLite writer for a request each. No connection is
    held while the write waits for its batch (on PostgreSQL the batch needs one of the pool's).
    """
    prompt = _checked_prompt(settings, data.prompt)
    metadata = _checked_metadata(settings, data.metadata)
    webhook_url = (
        checked_url(settings, data.webhook_url, parameter="webhook_url")
        if data.webhook_url is not None
        else None
    )
    key = _checked_idempotency_key(idempotency_key)
    request_hash = _request_hash(data) if key is not None else None
    if key is not None and request_hash is not None:
        existing = await _run_by_idempotency_key(db, account_id=account_id, key=key)
        if existing is not None:
            return _replay(existing, request_hash)

    agent = await _agent_for_run(db, account_id=account_id, agent_id=data.agent_id)
    now = utcnow()
    new_thread: dict[str, Any] | None = None
    if data.thread_id is not None:
        thread = (
            await db.point_read(
                functools.partial(
                    repository.thread_id_of_account,
                    account_id=account_id,
                    thread_id=data.thread_id,
                )
            )
            if _ID.match(data.thread_id)
            else None
        )
        if thread is None:
            raise NotFound(
                f"no thread with id {data.thread_id!r}", details={"parameter": "thread_id"}
            )
        thread_id = thread
    else:
        thread_id = new_id("thr")
        new_thread = {
            "id": thread_id,
            "account_id": account_id,
            "active_run_id": None,
            "created_at": now,
            "updated_at": now,
        }

    config = dict(agent.config)
    values: dict[str, Any] = {
        "id": new_id("run"),
        "account_id": account_id,
        "thread_id": thread_id,
        "agent_id": agent.id,
        "model": str(config.get("model", "atrium:offline")),
        "agent_config": config,
        "status": "queued",
        "prompt": prompt,
        "run_metadata": metadata,
        "idempotency_key": key,
        "request_hash": request_hash,
        "webhook_url": webhook_url,
        "webhook_secret": signing.new_secret() if webhook_url is not None else None,
        "attempts": 0,
        "cancel_requested": False,
        "last_event_seq": 1,
        "input_tokens": 0,
        "output_tokens": 0,
        "requests": 0,
        "tool_calls": 0,
        "credits_micro": 0,
        "created_at": now,
    }
    row = events.event_row(values["id"], 1, events.QUEUED, {"status": "queued"}, now)
    try:
        await writer.write_sync(
            functools.partial(repository.insert_run, thread=new_thread, run=values, event=row)
        )
    except IntegrityError:
        if key is None or request_hash is None:
            raise
        # Another request with this Idempotency-Key committed first.
        existing = await _run_by_idempotency_key(db, account_id=account_id, key=key)
        if existing is None:
            raise
        return _replay(existing, request_hash)
    broker.publish_events(values["id"], [events.event_message(row)])
    broker.wake_workers()
    return CreatedRun(Run(**values), replayed=False)


async def _run_by_idempotency_key(db: Database, *, account_id: int, key: str) -> Run | None:
    async with db.session(write=False) as session:
        return await repository.get_run_by_idempotency_key(session, account_id=account_id, key=key)


async def _agent_for_run(db: Database, *, account_id: int, agent_id: str | None) -> AgentForRun:
    agent = await db.point_read(
        functools.partial(agents_repository.run_agent, account_id=account_id, agent_id=agent_id)
    )
    if agent is not None:
        return agent
    if agent_id is not None:
        raise agent_not_found(agent_id)
    # The account's first run without an agent: create the default one (a write, so not in
    # the request's read session).
    async with db.transaction() as write:
        created = await get_or_create_default_agent(write, account_id=account_id)
        return AgentForRun(id=created.id, config=dict(created.config))


async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run:
    run = (
        await repository.get_run(session, account_id=account_id, run_id=run_id)
        if _ID.match(run_id)
        else None
    )
    if run is None:
        raise _not_found(run_id)
    return run


async def visible_run_id(db: Database, *, account_id: int, run_id: str) -> str:
    """`run_id` if the account owns such a run (a point lookup, see `Database.point_read`)."""
    found = (
        await db.point_read(
            functools.partial(repository.run_id_of_account, account_id=account_id, run_id=run_id)
        )
        if _ID.match(run_id)
        else None
    )
    if found is None:
        raise _not_found(run_id)
    return found


async def artifacts_of(session: AsyncSession, runs: Sequence[Run]) -> dict[str, list[Artifact]]:
    """Artifact metadata of the finished runs among `runs` (the only ones that show them)."""
    finished = [run.id for run in runs if run.status in TERMINAL_STATUSES]
    return await repository.artifacts_of_runs(session, finished)


async def list_runs(
    session: AsyncSession,
    *,
    account_id: int,
    status: str | None,
    agent_id: str | None,
    thread_id: str | None,
    limit: int,
    cursor: str | None,
) -> tuple[Sequence[Run], str | None]:
    """A page of the account's runs, newest first, and the cursor of the next page."""
    if status is not None and status not in STATUSES:
        raise InvalidParameter("status", f"status must be one of {', '.join(STATUSES)}")
    before = decode_cursor(cursor) if cursor else None
    if any(value is not None and not _ID.match(value) for value in (agent_id, thread_id)):
        return [], None  # no run has such an agent or thread
    rows = await repository.list_runs(
        session,
        account_id=account_id,
        status=status,
        agent_id=agent_id,
        thread_id=thread_id,
        before=before,
        limit=limit + 1,
    )
    return split_page(rows, limit)


async def cancel_run(session: AsyncSession, *, broker: Broker, account_id: int, run_id: str) -> Run:
    """Cancel a queued run at once; ask the worker of a running run to stop at its next step."""
    run = await get_run(session, account_id=account_id, run_id=run_id)
    if run.status in TERMINAL_STATUSES:
        raise Conflict(
            f"run is already {run.status}", details={"run_id": run.id, "status": run.status}
        )
    now = utcnow()
    if run.status == "queued":
        seq = await repository.cancel_queued(session, run_id=run.id, now=now)
        if seq is not None:
            await _record_cancelled_in_queue(session, broker=broker, run=run, seq=seq, now=now)
            await session.refresh(run)
            return run
    if await repository.request_cancel(session, run_id=run.id):
        after_commit(session, lambda: broker.request_cancel(run.id))
    await session.refresh(run)
    return run


async def _record_cancelled_in_queue(
    session: AsyncSession, *, broker: Broker, run: Run, seq: int, now: datetime
) -> None:
    payload = {"status": "cancelled", "billing": _zero_billing()}
    row = events.event_row(run.id, seq, events.CANCELLED, payload, now)
    await repository.insert_events(session, [row])
    webhooks = await session.run_sync(
        functools.partial(
            record_terminal,
            account_id=run.account_id,
            agent_id=run.agent_id,
            run_id=run.id,
            status="cancelled",
            webhook_url=run.webhook_url,
            now=now,
        )
    )
    message = events.event_message(row)

    def announce() -> None:
        broker.publish_events(run.id, [message])
        # The thread's next run may have been waiting behind this one.
        broker.wake_workers()
        if webhooks:
            outbox.wake_senders()

    after_commit(session, announce)


def _zero_billing() -> dict[str, Any]:
    return {"credits": 0.0, "input_tokens": 0, "output_tokens": 0, "requests": 0, "tool_calls": 0}


async def get_artifact(
    session: AsyncSession, *, account_id: int, run_id: str, artifact_id: str
) -> Artifact:
    run = await get_run(session, account_id=account_id, run_id=run_id)
    artifact = (
        await repository.get_artifact(session, run_id=run.id, artifact_id=artifact_id)
        if _ID.match(artifact_id)
        else None
    )
    if artifact is None:
        raise NotFound(
            f"no artifact with id {artifact_id!r} in this run",
            details={"parameter": "artifact_id"},
        )
    return artifact
