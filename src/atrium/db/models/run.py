"""Threads, runs (also the durable work queue), their events and their artifacts."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from sqlalchemy import (
    JSON,
    BigInteger,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from atrium.db.base import Base, TimestampMixin
from atrium.kit.time import utcnow


class CancelReason(StrEnum):
    """Why a run's cancel was asked (`runs.cancel_reason`)."""

    CLIENT = "client"
    # A later prompt of the thread (`if_busy`): the run's messages so far stay in the history.
    INTERRUPT = "interrupt"
    # A later prompt of the thread (`if_busy`): the run is dropped from the history.
    ROLLBACK = "rollback"
    THREAD_DELETED = "thread_deleted"
    # The run's schedule fired again while it was unfinished (`on_overlap: cancel_previous`).
    SUPERSEDED = "superseded"


class RunStatus(StrEnum):
    """Where a run is in its life. The column stores the value; `TRANSITIONS` says which moves
    exist, and `atrium.runs.lifecycle` is the one module that makes them."""

    QUEUED = "queued"
    RUNNING = "running"
    # The run waits for the client (a tool call to approve or answer) before it goes on.
    REQUIRES_ACTION = "requires_action"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL_STATUSES: Final = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


class EventKind(StrEnum):
    """The kinds of a run's events (the SSE `event:` field)."""

    QUEUED = "run.queued"
    STARTED = "run.started"
    # A run re-executed after its worker was lost: what earlier attempts streamed is superseded.
    RESTARTED = "run.restarted"
    STEP = "run.step"
    MESSAGE_DELTA = "message.delta"
    ARTIFACT_CREATED = "artifact.created"
    TOOL_CALLED = "tool.called"
    TOOL_RETURNED = "tool.returned"
    # A memory tool's write or delete (runtime/memory_tools.py): the item and the tool call.
    MEMORY_WRITTEN = "memory.written"
    MEMORY_DELETED = "memory.deleted"
    REQUIRES_ACTION = "run.requires_action"
    COMPLETED = "run.completed"
    FAILED = "run.failed"
    CANCELLED = "run.cancelled"


# The event that ends a run in each terminal status (also the webhook event it delivers).
TERMINAL_EVENT: Final[dict[RunStatus, EventKind]] = {
    RunStatus.COMPLETED: EventKind.COMPLETED,
    RunStatus.FAILED: EventKind.FAILED,
    RunStatus.CANCELLED: EventKind.CANCELLED,
}
TERMINAL_KINDS: Final = frozenset(TERMINAL_EVENT.values())


class Thread(TimestampMixin, Base):
    """A conversation: its runs see the messages of its earlier runs, and run one at a time."""

    __tablename__ = "threads"
    __table_args__ = (
        # Listing scans an account's threads newest first; retention all threads oldest first.
        Index("ix_threads_account_id_created_at", "account_id", "created_at"),
        Index("ix_threads_created_at", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # The mutex that keeps one run of a thread executing at a time: set by the claim that
    # starts a run (a conditional update, so racing workers cannot both win), cleared at its end.
    active_run_id: Mapped[str | None] = mapped_column(String(40), default=None)
    thread_metadata: Mapped[dict[str, Any]] = mapped_column(
        "metadata", JSON, default=dict, server_default="{}"
    )
    # A fork: the thread and run it was forked at, and a copy of the history it starts from (the
    # original's messages up to that run, pydantic-ai JSON), so the original may change or go.
    forked_from_thread_id: Mapped[str | None] = mapped_column(String(40), default=None)
    forked_from_run_id: Mapped[str | None] = mapped_column(String(40), default=None)
    base_messages: Mapped[list[Any] | None] = mapped_column(JSON, default=None)


class Run(Base):
    """One agent run. Rows with status `queued` are the work queue that workers claim from."""

    __tablename__ = "runs"
    __table_args__ = (
        # The claim scans queued runs oldest first; listing scans an account's runs newest first.
        Index("ix_runs_status_created_at", "status", "created_at"),
        Index("ix_runs_account_id_created_at", "account_id", "created_at"),
        Index("ix_runs_thread_id_created_at", "thread_id", "created_at"),
        # A schedule's runs: `GET /agent/runs?schedule_id=`, its overlap check, its usage.
        Index("ix_runs_schedule_id_created_at", "schedule_id", "created_at"),
        UniqueConstraint("account_id", "idempotency_key", name="uq_runs_account_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"))
    # No foreign key: deleted agents are kept (soft delete), and a run must outlive anything.
    agent_id: Mapped[str] = mapped_column(String(40))
    model: Mapped[str] = mapped_column(String(200))
    # The agent's config as it was when the run was created: editing an agent later does not
    # change runs already queued.
    agent_config: Mapped[dict[str, Any]] = mapped_column(JSON)
    # The agent version `agent_config` was taken from (`agent_versions.number`); None for runs
    # created before agents had versions.
    agent_version: Mapped[int | None] = mapped_column(Integer, default=None)
    status: Mapped[str] = mapped_column(String(16))
    prompt: Mapped[str] = mapped_column(Text)
    # The input parts given beside `prompt` (`atrium.files.input_parts`): text, and files and
    # images by reference (file or artifact id, URL) with what the file was; never their bytes.
    input: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    # The memory blocks rendered into the run's instructions, as its last execution read them:
    # `[{label, block_id, version}]` (`memory.blocks.rendering`); None when its agent has none.
    memory_blocks: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    run_metadata: Mapped[dict[str, Any]] = mapped_column("metadata", JSON)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), default=None)
    request_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    # The run's own webhook (`webhook_url` on create) and the secret that signs it (sealed,
    # as an endpoint's).
    webhook_url: Mapped[str | None] = mapped_column(String(2048), default=None)
    webhook_secret: Mapped[str | None] = mapped_column(Text, default=None)
    # The schedule whose firing queued the run (no foreign key: a run outlives its schedule).
    schedule_id: Mapped[str | None] = mapped_column(String(40), default=None)

    # Queue and lease.
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    cancel_requested: Mapped[bool] = mapped_column(default=False)
    # Why a cancel was asked (`CancelReason`): a client's cancel, or a later prompt of the thread
    # that interrupts the run (its messages so far stay in the thread's history) or rolls it
    # back (they do not).
    cancel_reason: Mapped[str | None] = mapped_column(String(16), default=None)
    last_event_seq: Mapped[int] = mapped_column(Integer, default=0)

    # Waiting for the caller (`requires_action`, docs/design.md#requires-action): what it waits
    # for as the API shows it, until when, and how many times the run has waited (the current
    # wait's number).
    required_action: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    action_expires_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    waits: Mapped[int] = mapped_column(Integer, default=0, server_default="0")

    # Outcome.
    result: Mapped[str | None] = mapped_column(Text, default=None)
    # The result of a run with an output schema: a JSON object (`result` is then null).
    result_json: Mapped[dict[str, Any] | None] = mapped_column(JSON, default=None)
    error_code: Mapped[str | None] = mapped_column(String(64), default=None)
    error_message: Mapped[str | None] = mapped_column(Text, default=None)
    # The messages this run added to its thread (pydantic-ai's JSON form), for later runs; while
    # the run waits for the caller, its messages so far (later runs read completed runs only).
    messages: Mapped[list[Any] | None] = mapped_column(JSON, default=None)
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    tool_calls: Mapped[int] = mapped_column(Integer, default=0)
    credits_micro: Mapped[int] = mapped_column(BigInteger, default=0)

    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    finished_at: Mapped[datetime | None] = mapped_column(default=None)

    # Traces (`atrium.traces`): the W3C `traceparent` the creating request carried (the run's
    # span continues that trace), and the last event whose spans went to the OTLP collector.
    traceparent: Mapped[str | None] = mapped_column(String(55), default=None)
    trace_exported_seq: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class ThreadSummary(Base):
    """A summary of a thread's oldest messages, written by compaction: the model sees it in their
    place. `through_run_id` is the last run it covers (None: only the fork's base history); the
    messages themselves stay in storage verbatim."""

    __tablename__ = "thread_summaries"
    __table_args__ = (Index("ix_thread_summaries_thread_id_created_at", "thread_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    thread_id: Mapped[str] = mapped_column(ForeignKey("threads.id", ondelete="CASCADE"))
    through_run_id: Mapped[str | None] = mapped_column(String(40), default=None)
    text: Mapped[str] = mapped_column(Text)
    # What the summarising request cost, billed as its own line.
    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    credits_micro: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RunEvent(Base):
    """One event of a run's stream; `seq` is the SSE `id:` and is dense per run from 1."""

    __tablename__ = "run_events"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_run_events_run_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Artifact(Base):
    """A file a run wrote; the content lives in the database with the run."""

    __tablename__ = "artifacts"
    __table_args__ = (
        # A run writes a name once (a rewrite replaces it), so a retried run cannot duplicate it.
        UniqueConstraint("run_id", "name", name="uq_artifacts_run_id"),
        Index("ix_artifacts_thread_id", "thread_id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    thread_id: Mapped[str] = mapped_column(String(40))
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(127))
    size_bytes: Mapped[int] = mapped_column(Integer)
    sha256: Mapped[str] = mapped_column(String(64))
    content: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class RunAction(Base):
    """The caller's answer to one wait of a run: the calls it answered and the answers.

    One row per (run, wait): two answers to the same wait cannot both commit. The worker that
    resumes the run reads the answers of its latest wait from here.
    """

    __tablename__ = "run_actions"
    __table_args__ = (
        UniqueConstraint("run_id", "wait", name="uq_run_actions_run_id_wait"),
        UniqueConstraint("run_id", "idempotency_key", name="uq_run_actions_run_id_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    wait: Mapped[int] = mapped_column(Integer)
    tool_calls: Mapped[list[Any]] = mapped_column(JSON)
    answers: Mapped[dict[str, Any]] = mapped_column(JSON)
    idempotency_key: Mapped[str | None] = mapped_column(String(200), default=None)
    request_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
