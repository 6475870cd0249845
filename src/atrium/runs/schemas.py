"""Request and response bodies of the agent runs group (DESIGN §6)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["queued", "running", "completed", "failed", "cancelled"]
STATUSES: tuple[RunStatus, ...] = ("queued", "running", "completed", "failed", "cancelled")
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class RunCreate(BaseModel):
    """A prompt to run, optionally with a named agent, an existing thread and metadata."""

    model_config = ConfigDict(extra="ignore")

    prompt: str = Field(description="The task text. Required, not blank.")
    agent_id: str | None = Field(None, description="Agent to run; default: the account's default.")
    thread_id: str | None = Field(None, description="Thread to continue; default: a new thread.")
    metadata: dict[str, Any] | None = Field(None, description="Free-form JSON kept with the run.")
    webhook_url: str | None = Field(
        None,
        description="An http(s) URL that receives the finished run, signed (Standard Webhooks) "
        "with the `webhook_secret` of the create response.",
    )


class Billing(BaseModel):
    """What a run cost, in credits (never a currency), and the usage behind it."""

    credits: float
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int


class RunError(BaseModel):
    code: str
    message: str


class ArtifactOut(BaseModel):
    """Metadata of a file a run wrote; `download_url` serves its content."""

    artifact_id: str
    run_id: str
    name: str
    mime_type: str
    size_bytes: int
    sha256: str
    created_at: str
    download_url: str


class RunOut(BaseModel):
    """A run. `result`, `artifacts`, `billing` appear once it is finished; `error` if failed."""

    run_id: str
    thread_id: str
    agent_id: str
    status: RunStatus
    created_at: str
    started_at: str | None
    finished_at: str | None
    status_url: str
    events_url: str
    artifacts_url: str
    metadata: dict[str, Any]
    result: str | None = None
    artifacts: list[ArtifactOut] | None = None
    billing: Billing | None = None
    error: RunError | None = None
    webhook_secret: str | None = Field(
        None,
        description="`whsec_…`: signs the deliveries to `webhook_url`. Only in the create "
        "response (and its idempotent replay) of a run created with a `webhook_url`.",
    )


class RunList(BaseModel):
    """A page of runs, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[RunOut]
    has_more: bool
    next_cursor: str | None


class ArtifactList(BaseModel):
    data: list[ArtifactOut]


class EventOut(BaseModel):
    """One event of a run: `id` is its sequence number in the run (the SSE `id:`)."""

    id: int
    event: str
    data: dict[str, Any]


class EventList(BaseModel):
    data: list[EventOut]
