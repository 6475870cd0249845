"""SQL of the runs API: the runs and threads a request creates or reads, and their artifacts.

The queue a worker claims from is `runs.lifecycle.run_queue`, the events `runs.events.event_store`,
the runs waiting for their caller `runs.lifecycle.waiting_runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Connection, Table, bindparam, delete, insert, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session, defer

from atrium.db.base import Base
from atrium.db.models import Artifact, Run, Thread
from atrium.kit.cursor import Position, older_than
from atrium.runs.events import event_store

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


def run_with_artifacts(
    conn: Connection, *, account_id: int, run_id: str, finished: frozenset[str]
) -> tuple[Run, list[Artifact]] | None:
    """The account's run as its body shows it, with its artifacts' metadata when its status is
    in `finished` (only a finished run shows them): point reads (`Database.point_read`; the
    primary key, then the unique index on the run's artifacts, at most
    `ATRIUM_ARTIFACT_MAX_PER_RUN` rows). Detached objects, as a read session would have left
    them once closed (the columns not read are not set)."""
    row = conn.execute(_RUN_SHOWN, {"b_run_id": run_id, "b_account_id": account_id}).first()
    if row is None:
        return None
    run = Run(**row._mapping)
    if run.status not in finished:
        return run, []
    artifacts = conn.execute(_ARTIFACTS_SHOWN, {"b_run_id": run_id}).all()
    return run, [Artifact(**artifact._mapping) for artifact in artifacts]


async def get_run(session: AsyncSession, *, account_id: int, run_id: str) -> Run | None:
    return await session.scalar(
        select(Run)
        .where(Run.id == run_id, Run.account_id == account_id)
        .options(defer(Run.messages), defer(Run.agent_config))
    )


def run_by_idempotency_key(
    conn: Connection, *, account_id: int, key: str
) -> tuple[str, str | None] | None:
    """(id, request hash) of the account's run created with this Idempotency-Key: a point read
    (`Database.point_read`: the unique index on account and key finds at most one row). Every
    create with a key makes it, so it is built once and reads two columns: loading a `Run`
    through a session here costs ten times the CPU
    (docs/decisions/0005-core-statements-in-the-queue-repository.md)."""
    row = conn.execute(_RUN_BY_IDEMPOTENCY_KEY, {"b_account_id": account_id, "b_key": key}).first()
    return None if row is None else (row.id, row.request_hash)


async def list_runs(
    session: AsyncSession,
    *,
    account_id: int,
    status: str | None,
    agent_id: str | None,
    thread_id: str | None,
    before: Position | None,
    limit: int,
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


def thread_id_of_account(conn: Connection, *, account_id: int, thread_id: str) -> str | None:
    """The thread's id if the account owns it (synchronous: `Database.point_read`)."""
    params = {"b_thread_id": thread_id, "b_account_id": account_id}
    found: str | None = conn.scalar(_THREAD_OF_ACCOUNT, params)
    return found


def run_id_of_account(conn: Connection, *, account_id: int, run_id: str) -> str | None:
    """The run's id if the account owns it (synchronous: `Database.point_read`)."""
    found: str | None = conn.scalar(
        _RUN_OF_ACCOUNT, {"b_run_id": run_id, "b_account_id": account_id}
    )
    return found


def insert_run(
    session: Session,
    *,
    thread: dict[str, Any] | None,
    run: dict[str, Any],
    event: dict[str, Any],
) -> None:
    """A new run (and its new thread) with its `run.queued` event: one synchronous write for
    the write batcher (see `Database.write_sync`). The tables, not the mapped classes."""
    conn = session.connection()
    if thread is not None:
        conn.execute(_INSERT_THREAD, [thread])
    row = {("metadata" if name == "run_metadata" else name): value for name, value in run.items()}
    conn.execute(_INSERT_RUN, [row])
    event_store.insert_events(session, [event])


def put_artifact(session: Session, values: dict[str, Any]) -> None:
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
