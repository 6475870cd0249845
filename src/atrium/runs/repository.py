"""SQL of the runs API: the runs and threads a request creates or reads, and their artifacts.

The queue a worker claims from is `runs.lifecycle.run_queue`, the events `runs.events.event_store`,
the runs waiting for their caller `runs.lifecycle.waiting_runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import Connection, Table, bindparam, delete, insert, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, defer

from atrium.agents.config import AgentConfig
from atrium.db.base import Base
from atrium.db.engine import Database
from atrium.db.models import Artifact, Run, RunStatus, Thread
from atrium.files.input_parts import StoredPart
from atrium.kit.cursor import Position, older_than
from atrium.kit.json_object import JsonObject
from atrium.runs.events import event_store
from atrium.runs.events.shapes import EventRow

# The tables, not the mapped classes: an ORM-enabled INSERT goes through SQLAlchemy's
# bulk-persistence layer, which costs about 0.15 ms of CPU per statement more than the same
# Core statement (no ORM objects are involved either way;
# docs/decisions/0005-core-statements-in-the-queue-repository.md).
_RUNS = cast(Table, Run.__table__)
_THREADS = cast(Table, Thread.__table__)
_ARTIFACTS = cast(Table, Artifact.__table__)

# Built once, with bound parameters, and executed with each run's values: building a statement
# and computing its cache key cost several times more CPU than executing it.
_INSERT_THREAD = insert(_THREADS)
_INSERT_RUN = insert(_RUNS)
_INSERT_ARTIFACT = insert(_ARTIFACTS)
_DELETE_ARTIFACT = delete(_ARTIFACTS).where(
    _ARTIFACTS.c.run_id == bindparam("b_run_id"), _ARTIFACTS.c.name == bindparam("b_name")
)
# The point reads of every create and stream open.
_THREAD_OF_ACCOUNT = select(Thread.id).where(
    Thread.id == bindparam("b_thread_id"), Thread.account_id == bindparam("b_account_id")
)
_RUN_OF_ACCOUNT = select(Run.id).where(
    Run.id == bindparam("b_run_id"), Run.account_id == bindparam("b_account_id")
)
_RUN_BY_IDEMPOTENCY_KEY = select(Run.id, Run.request_hash).where(
    Run.account_id == bindparam("b_account_id"), Run.idempotency_key == bindparam("b_key")
)


# `GET /agent/runs/{run_id}`, what a polling client asks for again and again: the columns a
# run's body shows and its artifacts' metadata, read by `run_with_artifacts` as point reads.
# Through an async session the same two reads cost about twice the CPU per poll (aiosqlite
# hands each statement to its thread and back;
# docs/decisions/0007-three-ways-to-the-database.md). Named by what they leave out (the run's
# conversation and configuration, which can be large, and the bookkeeping of the queue,
# webhooks and idempotency, which no body shows), so a column added for the body is read too.
_RUN_NOT_SHOWN = frozenset(
    {
        "agent_config",
        "messages",
        "idempotency_key",
        "request_hash",
        "webhook_url",
        "webhook_secret",
        "attempts",
        "lease_owner",
        "lease_expires_at",
        "cancel_requested",
        "last_event_seq",
        "action_expires_at",
        "waits",
    }
)
_ARTIFACT_NOT_SHOWN = frozenset({"content"})


class ArtifactRow(TypedDict):
    """The values of one `artifacts` row (a plain dict: it goes to the INSERT as it is)."""

    id: str
    run_id: str
    thread_id: str
    account_id: int
    name: str
    mime_type: str
    size_bytes: int
    sha256: str
    content: bytes
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewThread:
    """The thread a run starts when its creator names none."""

    id: str
    account_id: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class NewRun:
    """A run as its creator asked for it, before it is stored (`lifecycle.create` gives it its
    status and first event)."""

    id: str
    account_id: int
    thread_id: str
    agent_id: str
    model: str
    agent_config: AgentConfig
    prompt: str
    run_metadata: JsonObject
    idempotency_key: str | None
    request_hash: str | None
    webhook_url: str | None
    # Sealed (`webhooks.signing.sealed`): the row never holds the secret itself.
    webhook_secret: str | None
    created_at: datetime
    # The creating request's W3C `traceparent`, when valid (`traces.context`).
    traceparent: str | None = None
    # The schedule whose firing queues the run (`atrium.schedules`).
    schedule_id: str | None = None
    # The agent version `agent_config` was taken from (`atrium.agents.versions`).
    agent_version: int | None = None
    # The input parts beside the prompt, files by reference (`files.input_parts`).
    input: list[StoredPart] | None = None

    def attributes(self, *, status: RunStatus, last_event_seq: int) -> dict[str, Any]:
        """The `Run`'s attribute values once stored in `status`: no attempt, nothing used yet."""
        return {
            "id": self.id,
            "account_id": self.account_id,
            "thread_id": self.thread_id,
            "agent_id": self.agent_id,
            "model": self.model,
            "agent_config": self.agent_config,
            "prompt": self.prompt,
            "run_metadata": self.run_metadata,
            "idempotency_key": self.idempotency_key,
            "request_hash": self.request_hash,
            "webhook_url": self.webhook_url,
            "webhook_secret": self.webhook_secret,
            "created_at": self.created_at,
            "status": status,
            "last_event_seq": last_event_seq,
            "attempts": 0,
            "cancel_requested": False,
            "input_tokens": 0,
            "output_tokens": 0,
            "requests": 0,
            "tool_calls": 0,
            "credits_micro": 0,
            "traceparent": self.traceparent,
            "schedule_id": self.schedule_id,
            "agent_version": self.agent_version,
            "input": self.input,
            "trace_exported_seq": 0,
        }


def _columns(model: type[Base], left_out: frozenset[str]) -> list[Any]:
    """The model's columns but `left_out`, each labelled with its attribute's name
    (`run_metadata` is the column `metadata`), so a row builds the model: `Run(**row._mapping)`."""
    return [
        attribute.columns[0].label(attribute.key)
        for attribute in inspect(model).column_attrs
        if attribute.key not in left_out
    ]


_RUN_SHOWN = select(*_columns(Run, _RUN_NOT_SHOWN)).where(
    Run.id == bindparam("b_run_id"), Run.account_id == bindparam("b_account_id")
)
_ARTIFACTS_SHOWN = (
    select(*_columns(Artifact, _ARTIFACT_NOT_SHOWN))
    .where(Artifact.run_id == bindparam("b_run_id"))
    .order_by(Artifact.created_at, Artifact.id)
)


async def run_with_artifacts(
    db: Database, *, account_id: int, run_id: str, finished: frozenset[str]
) -> tuple[Run, list[Artifact]] | None:
    """The account's run as its body shows it, with its artifacts' metadata when its status is
    in `finished` (only a finished run shows them): point reads (`Database.point_read`; the
    primary key, then the unique index on the run's artifacts, at most
    `ATRIUM_ARTIFACT_MAX_PER_RUN` rows). Detached objects, as a read session would have left
    them once closed (the columns not read are not set)."""

    def read(conn: Connection) -> tuple[Run, list[Artifact]] | None:
        row = conn.execute(_RUN_SHOWN, {"b_run_id": run_id, "b_account_id": account_id}).first()
        if row is None:
            return None
        run = Run(**row._mapping)
        if run.status not in finished:
            return run, []
        artifacts = conn.execute(_ARTIFACTS_SHOWN, {"b_run_id": run_id}).all()
        return run, [Artifact(**artifact._mapping) for artifact in artifacts]

    return await db.point_read(read)


async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run | None:
    return await session.scalar(
        select(Run)
        .where(Run.id == run_id, Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )


async def run_by_idempotency_key(
    db: Database, *, account_id: int, key: str
) -> tuple[str, str | None] | None:
    """(id, request hash) of the account's run created with this Idempotency-Key: a point read
    (`Database.point_read`: the unique index on account and key finds at most one row). Every
    create with a key makes it, so it is built once and reads two columns: loading a `Run`
    through a session here costs ten times the CPU
    (docs/decisions/0005-core-statements-in-the-queue-repository.md)."""

    def read(conn: Connection) -> tuple[str, str | None] | None:
        params = {"b_account_id": account_id, "b_key": key}
        row = conn.execute(_RUN_BY_IDEMPOTENCY_KEY, params).first()
        return None if row is None else (row.id, row.request_hash)

    return await db.point_read(read)


async def list_runs(
    session: AsyncSession,
    *,
    account_id: int,
    status: str | None,
    agent_id: str | None,
    thread_id: str | None,
    before: Position | None,
    limit: int,
    schedule_id: str | None = None,
    agent_version: int | None = None,
) -> Sequence[Run]:
    """The account's runs newest first, strictly after the cursor position `before`."""
    query = (
        select(Run)
        .where(Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )
    if status is not None:
        query = query.where(Run.status == status)
    if agent_id is not None:
        query = query.where(Run.agent_id == agent_id)
    if thread_id is not None:
        query = query.where(Run.thread_id == thread_id)
    if schedule_id is not None:
        query = query.where(Run.schedule_id == schedule_id)
    if agent_version is not None:
        query = query.where(Run.agent_version == agent_version)
    if before is not None:
        query = query.where(older_than(Run.created_at, Run.id, before))
    query = query.order_by(Run.created_at.desc(), Run.id.desc()).limit(limit)
    return (await session.scalars(query)).all()


async def artifacts_of_runs(
    session: AsyncSession, run_ids: Sequence[str]
) -> dict[str, list[Artifact]]:
    """Artifact metadata (content not loaded) of each run, oldest first."""
    found: dict[str, list[Artifact]] = {run_id: [] for run_id in run_ids}
    if not run_ids:
        return found
    rows = await session.scalars(
        select(Artifact)
        .where(Artifact.run_id.in_(run_ids))
        .options(defer(Artifact.content))
        .order_by(Artifact.created_at, Artifact.id)
    )
    for row in rows:
        found[row.run_id].append(row)
    return found


async def get_artifact(session: AsyncSession, *, run_id: str, artifact_id: str) -> Artifact | None:
    return await session.scalar(
        select(Artifact).where(Artifact.run_id == run_id, Artifact.id == artifact_id)
    )


async def thread_id_of_account(db: Database, *, account_id: int, thread_id: str) -> str | None:
    """Point read: the thread's id if the account owns it."""
    params = {"b_thread_id": thread_id, "b_account_id": account_id}

    def read(conn: Connection) -> str | None:
        found: str | None = conn.scalar(_THREAD_OF_ACCOUNT, params)
        return found

    return await db.point_read(read)


async def run_id_of_account(db: Database, *, account_id: int, run_id: str) -> str | None:
    """Point read: the run's id if the account owns it."""
    params = {"b_run_id": run_id, "b_account_id": account_id}

    def read(conn: Connection) -> str | None:
        found: str | None = conn.scalar(_RUN_OF_ACCOUNT, params)
        return found

    return await db.point_read(read)


def insert_run(
    session: Session, *, thread: NewThread | None, run: NewRun, status: RunStatus, event: EventRow
) -> None:
    """A new run in `status` (and its new thread) with its first event: one synchronous write
    for the write batcher (see `Database.write_sync`). The tables, not the mapped classes."""
    conn = session.connection()
    if thread is not None:
        created = thread.created_at
        values = {"id": thread.id, "account_id": thread.account_id, "active_run_id": None}
        conn.execute(_INSERT_THREAD, [{**values, "created_at": created, "updated_at": created}])
    row = run.attributes(status=status, last_event_seq=event["seq"])
    row["metadata"] = row.pop("run_metadata")
    conn.execute(_INSERT_RUN, [row])
    event_store.insert_events(session, [event])


def put_artifact(session: Session, values: ArtifactRow) -> None:
    """Store an artifact; a second write of the same name in the run replaces the first."""
    conn = session.connection()
    conn.execute(_DELETE_ARTIFACT, {"b_run_id": values["run_id"], "b_name": values["name"]})
    conn.execute(_INSERT_ARTIFACT, [values])


async def thread_artifacts(session: AsyncSession, *, thread_id: str) -> Sequence[Artifact]:
    return (
        await session.scalars(
            select(Artifact)
            .where(Artifact.thread_id == thread_id)
            .options(defer(Artifact.content))
            .order_by(Artifact.created_at, Artifact.id)
        )
    ).all()


async def thread_artifact(session: AsyncSession, *, thread_id: str, name: str) -> Artifact | None:
    return await session.scalar(
        select(Artifact)
        .where(Artifact.thread_id == thread_id, Artifact.name == name)
        .order_by(Artifact.created_at.desc())
        .limit(1)
    )


async def record_memory_blocks(
    session: AsyncSession, *, run_id: str, owner: str, seen: list[Any]
) -> bool:
    """The block versions the run's instructions were rendered from (`runs.memory_blocks`),
    written while `owner` holds the run's lease; False (nothing written) once it lost it."""
    written = await session.scalar(
        update(Run)
        .where(Run.id == run_id, Run.lease_owner == owner)
        .values(memory_blocks=seen)
        .returning(Run.id)
        .execution_options(synchronize_session=False)
    )
    return written is not None
