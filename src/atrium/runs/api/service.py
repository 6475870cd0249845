"""Rules of the runs API: creating (idempotently), reading, listing and cancelling runs.

Services never commit: the request's session does. Everything others must hear about (events,
wake-ups, cancel requests) is published from an after-commit hook, so nobody is told about a
run that then fails to commit.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents import repository as agents_repository
from atrium.agents.config import stored_config
from atrium.agents.errors import AgentNotFound
from atrium.agents.model_check import ModelCheck
from atrium.agents.repository import AgentForRun
from atrium.agents.service import get_or_create_default_agent
from atrium.agents.versions.resolve import SEPARATOR, agent_at, version_filter
from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import TERMINAL_STATUSES, Artifact, Run, RunStatus
from atrium.errors import InvalidParameter
from atrium.files.input_parts import StoredPart, checked_input
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import known_id, looks_like_id, new_id
from atrium.kit.json_depth import TOO_DEEP, too_deep
from atrium.kit.json_object import JsonObject
from atrium.kit.time import utcnow
from atrium.providers import repository as providers_repository
from atrium.runs import lifecycle, repository
from atrium.runs.api.errors import (
    ArtifactNotFound,
    IdempotencyKeyReused,
    RunAlreadyFinished,
    RunNotFound,
    ThreadBusy,
    ThreadNotFound,
)
from atrium.runs.api.schemas import RunCreate
from atrium.runs.events import event_store
from atrium.runs.events.broker import Broker
from atrium.runs.events.stream import RunEventStream
from atrium.runs.lifecycle import writes
from atrium.runs.lifecycle.busy_threads import IfBusy
from atrium.runs.lifecycle.moves import Announcement, created
from atrium.runs.repository import NewRun, NewThread
from atrium.secrets_at_rest import SecretBox, SecretsUnavailable
from atrium.settings import Settings
from atrium.traces.context import stored_traceparent
from atrium.webhooks import signing
from atrium.webhooks.service import checked_url

MAX_IDEMPOTENCY_KEY = 200
_STATUSES = tuple(RunStatus)


@dataclass(frozen=True, slots=True)
class RunView:
    """A run and what `GET /agent/runs/{run_id}` shows with it: its artifacts once finished."""

    run: Run
    artifacts: list[Artifact] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CreatedRun:
    view: RunView
    replayed: bool
    # The signing secret of the run's `webhook_url`, which its row holds only sealed.
    webhook_secret: str | None = None


@dataclass(frozen=True, slots=True)
class RunPage:
    views: list[RunView]
    next_cursor: str | None


def _request_hash(data: RunCreate) -> str:
    # Fields at their default hash as before the field existed (stored keys still match).
    unset = {"webhook_url"} if data.webhook_url is None else set()
    if data.input is None:
        unset.add("input")
    if data.if_busy == IfBusy.ENQUEUE:
        unset.add("if_busy")
    body = data.model_dump(exclude=unset or None)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _storable(value: str) -> bool:
    """Text a database can hold: no NUL (PostgreSQL), no lone surrogates (UTF-8)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in value


def checked_prompt(settings: Settings, prompt: str) -> str:
    if not prompt.strip():
        raise InvalidParameter("prompt", "prompt must not be blank")
    if not _storable(prompt):
        raise InvalidParameter("prompt", "prompt must be Unicode text without NUL characters")
    if len(prompt) > settings.run_max_prompt_chars:
        raise InvalidParameter(
            "prompt", f"prompt is longer than {settings.run_max_prompt_chars} characters"
        )
    return prompt


def checked_metadata(settings: Settings, metadata: JsonObject | None) -> JsonObject:
    if metadata is None:
        return {}
    if too_deep(metadata):
        raise InvalidParameter("metadata", f"metadata {TOO_DEEP}")
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


@dataclass(frozen=True, slots=True)
class _Idempotency:
    """A create's Idempotency-Key and the hash of its body."""

    key: str
    request_hash: str


@dataclass(frozen=True, slots=True)
class _CheckedCreate:
    """A create's body, checked."""

    prompt: str
    metadata: JsonObject
    webhook_url: str | None
    idempotency: _Idempotency | None
    # The input parts as the run stores them (`files.input_parts`).
    input: list[StoredPart] | None = None


async def _replayed(
    db: Database, *, settings: Settings, account_id: int, idempotency: _Idempotency | None
) -> CreatedRun | None:
    """The run created earlier with this Idempotency-Key (a 409 if its body differed); None
    without a key or without such a run.

    The lookup is a point read on the event loop: every create with a key makes it, and 1,000
    at once through the 8 connections of the async read pool (four thread hand-offs per
    statement) would queue past the pool's 60 s timeout (docs/design.md#database-access). Only
    a replay opens a session, for the run's artifacts.
    """
    if idempotency is None:
        return None
    existing = await repository.run_by_idempotency_key(
        db, account_id=account_id, key=idempotency.key
    )
    if existing is None:
        return None
    run_id, stored_hash = existing
    if stored_hash != idempotency.request_hash:
        raise IdempotencyKeyReused(run_id)
    async with db.session(write=False) as session:
        run = await session.get(Run, run_id)
        if run is None:  # runs are never deleted; a key stays bound to its run
            return None
        (view,) = await _views(session, [run])
    return CreatedRun(view, replayed=True, webhook_secret=_opened_secret(settings, run))


def _opened_secret(settings: Settings, run: Run) -> str | None:
    """The run's signing secret, for its creator's replay; left out if the deployment's key no
    longer opens it (its deliveries fail, saying why)."""
    if run.webhook_secret is None:
        return None
    try:
        return signing.opened(run.webhook_secret, SecretBox.of(settings))
    except SecretsUnavailable:
        return None


async def create_run(
    *,
    db: Database,
    writer: WriteBatcher,
    settings: Settings,
    models: ModelCheck,
    broker: Broker,
    account_id: int,
    data: RunCreate,
    idempotency_key: str | None,
    traceparent: str | None = None,
) -> CreatedRun:
    """Queue a run. The same Idempotency-Key and body return the first run again.

    Synchronous write: the lookups (helpers) are point reads, and the rows (thread, run,
    `run.queued` event, see `lifecycle.create`) one synchronous write handed to the process's
    write batcher: a burst of creates commits in a few
    transactions instead of holding the one SQLite writer for a request each. No connection is
    held while the write waits for its batch (on PostgreSQL the batch needs one of the pool's).
    """
    checked = await _checked_create(
        db, settings=settings, models=models, account_id=account_id, data=data, key=idempotency_key
    )
    replayed = await _replayed(
        db, settings=settings, account_id=account_id, idempotency=checked.idempotency
    )
    if replayed is not None:
        return replayed
    prepared = await _prepared_run(
        db,
        settings,
        account_id=account_id,
        data=data,
        checked=checked,
        traceparent=traceparent,
    )
    return await _queued(
        db,
        writer,
        broker,
        settings=settings,
        checked=checked,
        prepared=prepared,
        policy=data.if_busy,
    )


@dataclass(frozen=True, slots=True)
class _PreparedRun:
    """The run to store, its thread, and its webhook signing secret in the clear (None: no
    webhook), which only the create's answer shows."""

    thread: _RunThread
    run: NewRun
    secret: str | None


async def _prepared_run(
    db: Database,
    settings: Settings,
    *,
    account_id: int,
    data: RunCreate,
    checked: _CheckedCreate,
    traceparent: str | None,
) -> _PreparedRun:
    """The run to store for a checked create: its agent and thread looked up (point reads; the
    account's default agent created on its first run), its id and secret drawn."""
    run_id = new_id("run")  # before the agent: a version split is decided by the run id's hash
    agent = await _agent_for_run(
        db,
        account_id=account_id,
        agent_id=data.agent_id,
        default_model=settings.default_model,
        run_id=run_id,
    )
    now = utcnow()
    thread = await _thread_for_run(db, account_id=account_id, thread_id=data.thread_id, now=now)
    secret = signing.new_secret() if checked.webhook_url is not None else None
    run = _new_run(
        settings,
        run_id=run_id,
        account_id=account_id,
        thread_id=thread.id,
        agent=agent,
        data=data,
        checked=checked,
        secret=secret,
        now=now,
        traceparent=traceparent,
    )
    return _PreparedRun(thread, run, secret)


async def _queued(
    db: Database,
    writer: WriteBatcher,
    broker: Broker,
    *,
    settings: Settings,
    checked: _CheckedCreate,
    prepared: _PreparedRun,
    policy: IfBusy,
) -> CreatedRun:
    """The run stored, then announced; or, when another request with its Idempotency-Key
    committed first, that request's run."""
    thread, run, secret = prepared.thread, prepared.run, prepared.secret
    try:
        stored, announcements = await _stored(db, writer, thread=thread.new, run=run, policy=policy)
    except IntegrityError:
        replayed = await _lost_race(db, settings=settings, thread=thread, checked=checked, run=run)
        if replayed is None:
            raise
        return replayed
    for announcement in announcements:
        announcement.send(broker)
    return CreatedRun(RunView(created(stored)), replayed=False, webhook_secret=secret)


async def _stored(
    db: Database, writer: WriteBatcher, *, thread: NewThread | None, run: NewRun, policy: IfBusy
) -> tuple[NewRun, Sequence[Announcement]]:
    """Store the run: through the write batcher, or, for a policy other than `enqueue` on an
    existing thread, decided against the thread's unfinished runs in a transaction of its own
    (`busy_threads`). The run as stored, and what to announce now that it is committed."""
    if thread is not None or policy == IfBusy.ENQUEUE:
        announcement = await writes.create_run(writer, thread=thread, run=run, now=run.created_at)
        return run, (announcement,)
    admission = await writes.admit_run(db, run=run, policy=policy)
    if admission.run is None:
        raise ThreadBusy(run.thread_id)
    return admission.run, admission.announcements


async def _lost_race(
    db: Database, *, settings: Settings, thread: _RunThread, checked: _CheckedCreate, run: NewRun
) -> CreatedRun | None:
    """Why the run's insert broke a constraint, when a race explains it: its thread deleted since
    the lookup (`DELETE /threads`: a 404), or another request with its Idempotency-Key
    committed first (that run, replayed). None otherwise."""
    if thread.new is None and not await _thread_still_there(
        db, account_id=run.account_id, thread_id=thread.id
    ):
        raise ThreadNotFound(thread.id) from None
    return await _replayed(
        db, settings=settings, account_id=run.account_id, idempotency=checked.idempotency
    )


async def _thread_still_there(db: Database, *, account_id: int, thread_id: str) -> bool:
    found = await repository.thread_id_of_account(db, account_id=account_id, thread_id=thread_id)
    return found is not None


async def _checked_create(
    db: Database,
    *,
    settings: Settings,
    models: ModelCheck,
    account_id: int,
    data: RunCreate,
    key: str | None,
) -> _CheckedCreate:
    """The create's body checked (a 400 naming the first bad parameter), its model included."""
    prompt = checked_prompt(settings, data.prompt)
    metadata = checked_metadata(settings, data.metadata)
    webhook_url = (
        checked_url(settings, data.webhook_url, parameter="webhook_url")
        if data.webhook_url is not None
        else None
    )
    if data.config is not None and data.config.model is not None:
        # The agent's own model was checked when it was set.
        await models.require(
            data.config.model,
            account_providers=functools.partial(
                providers_repository.names_of_account, db, account_id=account_id
            ),
        )
    parts = (
        None
        if data.input is None
        else await checked_input(db, settings, account_id=account_id, parts=data.input)
    )
    key = _checked_idempotency_key(key)
    idempotency = None if key is None else _Idempotency(key, _request_hash(data))
    return _CheckedCreate(prompt, metadata, webhook_url, idempotency, parts or None)


@dataclass(frozen=True, slots=True)
class _RunThread:
    """The run's thread: its id, and the row to store with the run when it is new."""

    id: str
    new: NewThread | None


async def _thread_for_run(
    db: Database, *, account_id: int, thread_id: str | None, now: datetime
) -> _RunThread:
    """The run's thread: the account's own it names (point read), or a new one to store."""
    if thread_id is None:
        thread = NewThread(id=new_id("thr"), account_id=account_id, created_at=now)
        return _RunThread(thread.id, thread)
    found = await repository.thread_id_of_account(
        db, account_id=account_id, thread_id=known_id(thread_id, ThreadNotFound)
    )
    if found is None:
        raise ThreadNotFound(thread_id)
    return _RunThread(found, None)


def _new_run(
    settings: Settings,
    *,
    run_id: str,
    account_id: int,
    thread_id: str,
    agent: AgentForRun,
    data: RunCreate,
    checked: _CheckedCreate,
    secret: str | None,
    now: datetime,
    traceparent: str | None,
) -> NewRun:
    """The run to store: the agent's configuration with the request's own on top."""
    config = agent.config if data.config is None else agent.config | data.config.given()
    return NewRun(
        id=run_id,
        account_id=account_id,
        thread_id=thread_id,
        agent_id=agent.id,
        agent_version=agent.version,
        model=str(config.get("model", "atrium:offline")),
        agent_config=config,
        prompt=checked.prompt,
        input=checked.input,
        run_metadata=checked.metadata,
        idempotency_key=None if checked.idempotency is None else checked.idempotency.key,
        request_hash=None if checked.idempotency is None else checked.idempotency.request_hash,
        webhook_url=checked.webhook_url,
        webhook_secret=None if secret is None else signing.sealed(secret, SecretBox.of(settings)),
        created_at=now,
        traceparent=stored_traceparent(traceparent),
    )


async def _agent_for_run(
    db: Database, *, account_id: int, agent_id: str | None, default_model: str, run_id: str
) -> AgentForRun:
    """Point read: the agent the run uses (the account's default one when none is named), at
    the version `agt_…@3` (or `@v3`) or `agt_…@alias` names, else its live one."""
    if agent_id is not None and SEPARATOR in agent_id:
        return await agent_at(db, account_id=account_id, reference=agent_id, run_id=run_id)
    agent = await agents_repository.run_agent(db, account_id=account_id, agent_id=agent_id)
    if agent is not None:
        return agent
    if agent_id is not None:
        raise AgentNotFound(agent_id)
    return await _create_default_agent(db, account_id=account_id, model=default_model)


async def _create_default_agent(db: Database, *, account_id: int, model: str) -> AgentForRun:
    """Session (a unit of work): the account's first run without an agent creates the default
    one, a write, so not in the request's read-only session."""
    async with db.transaction() as write:
        created = await get_or_create_default_agent(write, account_id=account_id, model=model)
        return AgentForRun(
            id=created.id, config=stored_config(created.config), version=created.version
        )


async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run:
    run = await repository.get_run(
        session, account_id=account_id, run_id=known_id(run_id, RunNotFound)
    )
    if run is None:
        raise RunNotFound(run_id)
    return run


async def visible_run_id(db: Database, *, account_id: int, run_id: str) -> str:
    """Point read: `run_id` if the account owns such a run."""
    found = await repository.run_id_of_account(
        db, account_id=account_id, run_id=known_id(run_id, RunNotFound)
    )
    if found is None:
        raise RunNotFound(run_id)
    return found


async def run_view(session: AsyncSession, *, account_id: int, run_id: str) -> RunView:
    """The run as `GET /agent/runs/{run_id}` shows it (a webhook delivery's body too)."""
    run = await get_run(session, account_id=account_id, run_id=run_id)
    (view,) = await _views(session, [run])
    return view


async def shown_run(db: Database, *, account_id: int, run_id: str) -> RunView:
    """`run_view` as point reads (no session): what `GET /agent/runs/{run_id}` shows."""
    found = await repository.run_with_artifacts(
        db, account_id=account_id, run_id=known_id(run_id, RunNotFound), finished=TERMINAL_STATUSES
    )
    if found is None:
        raise RunNotFound(run_id)
    run, artifacts = found
    return RunView(run, artifacts)


async def _views(session: AsyncSession, runs: Sequence[Run]) -> list[RunView]:
    """Each run with its artifacts' metadata, loaded for the finished ones (only they show it)."""
    finished = [run.id for run in runs if run.status in TERMINAL_STATUSES]
    artifacts = await repository.artifacts_of_runs(session, finished)
    return [RunView(run, artifacts.get(run.id, [])) for run in runs]


async def list_artifacts(session: AsyncSession, *, account_id: int, run_id: str) -> list[Artifact]:
    """Metadata of the files the run has written so far, oldest first."""
    run = await get_run(session, account_id=account_id, run_id=run_id)
    return (await repository.artifacts_of_runs(session, [run.id]))[run.id]


async def events_so_far(
    db: Database, *, account_id: int, run_id: str, after_seq: int
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Every event of the run after `after_seq` (unbounded: read off the event loop)."""
    found = await visible_run_id(db, account_id=account_id, run_id=run_id)
    return await event_store.events_after(db, run_id=found, after_seq=after_seq)


async def event_stream(
    db: Database,
    *,
    broker: Broker,
    settings: Settings,
    account_id: int,
    still_authorized: Callable[[], Awaitable[bool]],
    run_id: str,
    after_seq: int,
) -> RunEventStream:
    """The run's events after `after_seq`, then live until its end. Point lookups only: no
    session is held, a stream may stay open for minutes. The stream ends when the key that
    opened it is revoked."""
    return RunEventStream(
        db=db,
        broker=broker,
        run_id=await visible_run_id(db, account_id=account_id, run_id=run_id),
        after_seq=after_seq,
        poll_seconds=settings.sse_poll_seconds,
        still_authorized=still_authorized,
        recheck_seconds=settings.sse_auth_recheck_seconds,
    )


async def list_runs(
    session: AsyncSession,
    *,
    account_id: int,
    status: str | None,
    agent_id: str | None,
    thread_id: str | None,
    limit: int,
    cursor: str | None,
    schedule_id: str | None = None,
    agent_version: int | None = None,
) -> RunPage:
    """A page of the account's runs, newest first, and the cursor of the next page.
    `agent_id` may name a version (`agt_…@3` or `agt_…@v3`), as `agent_version` does."""
    if status is not None and status not in _STATUSES:
        raise InvalidParameter("status", f"status must be one of {', '.join(_STATUSES)}")
    if agent_id is not None:
        wanted = version_filter(agent_id, agent_version)
        if wanted is None:
            return RunPage([], None)
        agent_id, agent_version = wanted
    before = decode_cursor(cursor) if cursor else None
    if any(
        value is not None and not looks_like_id(value)
        for value in (agent_id, thread_id, schedule_id)
    ):
        return RunPage([], None)  # no run has such an agent, thread or schedule
    rows = await repository.list_runs(
        session,
        account_id=account_id,
        status=status,
        agent_id=agent_id,
        thread_id=thread_id,
        schedule_id=schedule_id,
        agent_version=agent_version,
        before=before,
        limit=limit + 1,
    )
    runs, next_cursor = split_page(rows, limit)
    return RunPage(await _views(session, runs), next_cursor)


async def cancel_run(
    session: AsyncSession, *, broker: Broker, account_id: int, run_id: str
) -> RunView:
    """Cancel a queued or waiting run at once; ask the worker of a running run to stop at its
    next step."""
    run = await get_run(session, account_id=account_id, run_id=run_id)
    if run.status in TERMINAL_STATUSES:
        raise RunAlreadyFinished(run.id, run.status)
    await lifecycle.cancel(session, broker=broker, run=run)
    await session.refresh(run)
    (view,) = await _views(session, [run])
    return view


async def get_artifact(
    session: AsyncSession, *, account_id: int, run_id: str, artifact_id: str
) -> Artifact:
    run = await get_run(session, account_id=account_id, run_id=run_id)
    artifact = await repository.get_artifact(
        session, run_id=run.id, artifact_id=known_id(artifact_id, ArtifactNotFound)
    )
    if artifact is None:
        raise ArtifactNotFound(artifact_id)
    return artifact
