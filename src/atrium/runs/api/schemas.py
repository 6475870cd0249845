"""Request and response bodies of the agent runs group (docs/design.md#runs)."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from atrium.agents.config import AgentConfig
from atrium.agents.json_schemas import OutputSchema
from atrium.agents.schemas import Instructions, MaxOutputTokens, ModelName, Temperature
from atrium.db.models import CancelReason, RunStatus
from atrium.files.input_parts import RunInput
from atrium.kit.json_object import JsonObject
from atrium.kit.wire_schemas import NOT_BLANK_WITHOUT_NUL, PUBLIC_URL
from atrium.runs.lifecycle.busy_threads import IfBusy


class RunConfig(BaseModel):
    """Settings of the agent's `config` that apply to this run only; keys left out keep the
    agent's."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: ModelName | None = Field(None, description="`provider:name`, e.g. `atrium:offline`.")
    temperature: Temperature | None = Field(None, description="Sampling temperature, 0 to 2.")
    instructions: Instructions | None = Field(None, description="System instructions.")
    max_output_tokens: MaxOutputTokens | None = Field(
        None, description="Cap on output tokens per model request."
    )
    output_schema: OutputSchema | None = Field(
        None, description="A JSON Schema (an object type): `result` is then such an object."
    )

    def given(self) -> AgentConfig:
        """The keys the client set to a value (null means "the agent's"): this model's fields
        are keys of the agent's config."""
        given = {key: value for key, value in self.model_dump().items() if value is not None}
        return cast(AgentConfig, given)


class RunCreate(BaseModel):
    """A prompt to run, optionally with a named agent, an existing thread, metadata and
    per-run `config`. Unknown fields are a 400 (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(
        description="The task text. Required, not blank, no NUL; at most "
        "ATRIUM_RUN_MAX_PROMPT_CHARS characters.",
        json_schema_extra={"pattern": NOT_BLANK_WITHOUT_NUL},
    )
    input: RunInput | None = Field(
        None,
        description="Parts given after `prompt`, in order, in the same user message: "
        '`{"type": "text", "text"}`, `{"type": "file", "file_id" | "artifact_id"}`, '
        '`{"type": "image", "file_id" | "artifact_id" | "url"}` (docs/guide/files.md).',
    )
    agent_id: str | None = Field(
        None,
        description="Agent to run; default: the account's default. `agt_…@3` (or `agt_…@v3`) "
        "runs its version 3, `agt_…@prod` the version its alias `prod` points at "
        "(docs/guide/versions.md).",
    )
    thread_id: str | None = Field(None, description="Thread to continue; default: a new thread.")
    metadata: JsonObject | None = Field(None, description="Free-form JSON kept with the run.")
    webhook_url: str | None = Field(
        None,
        json_schema_extra={"anyOf": [{"type": "string", **PUBLIC_URL}, {"type": "null"}]},
        description="An http(s) URL that receives the finished run, signed (Standard Webhooks) "
        "with the `webhook_secret` of the create response.",
    )
    config: RunConfig | None = Field(
        None,
        description="model, temperature, instructions, max_output_tokens, output_schema for "
        "this run only; the agent's config for the keys left out.",
    )
    if_busy: IfBusy = Field(
        IfBusy.ENQUEUE,
        description="When `thread_id`'s thread has an unfinished run (queued, running or "
        "`requires_action`): `enqueue` this run behind it; `reject` it (409 `THREAD_BUSY`, "
        "nothing stored); `interrupt` the unfinished runs (cancelled, what they produced so "
        "far stays in the thread's history) and run this one; `rollback`: cancel them and drop "
        "them from the history. No effect on a new thread.",
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


class PendingToolCall(BaseModel):
    """A call the run waits for: a function tool's (the caller runs it and sends its output) or
    an MCP tool's that needs approval (`server_label` names its server)."""

    id: str
    kind: Literal["function", "approval"]
    name: str
    server_label: str | None
    arguments: Any


class RequiredAction(BaseModel):
    """What a `requires_action` run waits for; answer with `POST …/actions` before
    `expires_at`."""

    type: Literal["tool_calls"]
    expires_at: str
    tool_calls: list[PendingToolCall]


class ToolOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_call_id: str = Field(max_length=200)
    output: Any = Field(description="What the function returned: text, or any JSON value.")
    # Left out of the stored answer and its Idempotency-Key hash when false: an answer that
    # does not use it matches one stored by an atrium that does not know the field.
    is_error: bool = Field(
        False,
        strict=True,
        exclude_if=lambda value: not value,
        description="The output is the error the function raised: the function's on_error "
        'says whether the model reads it ("return") or the run fails ("fail").',
    )


class Approval(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_call_id: str = Field(max_length=200)
    approve: bool = Field(strict=True)
    reason: str | None = Field(
        None, max_length=2_000, description='A denial reaches the model as "denied: <reason>".'
    )


class RunActions(BaseModel):
    """Answers to every call of `required_action` at once: an output for each function call,
    an approval (or a denial) for each approval call."""

    model_config = ConfigDict(extra="forbid")

    tool_outputs: list[ToolOutput] = Field(default_factory=list, max_length=128)
    approvals: list[Approval] = Field(default_factory=list, max_length=128)


class BlockSeen(BaseModel):
    """A memory block version a run's instructions were rendered from."""

    label: str
    block_id: str
    version: int


class RunOut(BaseModel):
    """A run. `result`, `artifacts`, `billing` appear once it is finished; `error` if failed."""

    run_id: str
    thread_id: str
    agent_id: str
    status: RunStatus
    prompt: str = Field(description="The task text the run was created with.")
    input: list[JsonObject] | None = Field(
        None,
        description="The input parts the run was created with, files by reference (their "
        "`filename`, `content_type`, `size_bytes` added); absent when none.",
    )
    model: str = Field(description="The model the run uses: the agent's, or the run's config.")
    created_at: str
    started_at: str | None
    finished_at: str | None
    status_url: str
    events_url: str
    artifacts_url: str
    metadata: JsonObject
    schedule_id: str | None = Field(
        None, description="The schedule whose firing queued the run; absent otherwise."
    )
    agent_version: int | None = Field(
        None,
        description="The agent version whose config the run executes (`agt_…@3`, an alias's "
        "or the live one); absent on runs from before agents had versions.",
    )
    memory_blocks: list[BlockSeen] | None = Field(
        None,
        description="The memory blocks (`config.blocks`) rendered into the run's instructions, "
        "each at the version its last execution read; absent when its agent has none.",
    )
    result: str | JsonObject | None = Field(
        None, description="The final text, or a JSON object when the agent has an output schema."
    )
    artifacts: list[ArtifactOut] | None = None
    billing: Billing | None = None
    error: RunError | None = None
    cancel_reason: CancelReason | None = Field(
        None,
        description="Once cancelled: why. `client` (a cancel request), `interrupt` or "
        "`rollback` (a later prompt of the thread, `if_busy`), `thread_deleted`, "
        "`superseded` (its schedule fired again, `on_overlap: cancel_previous`).",
    )
    required_action: RequiredAction | None = Field(
        None, description="While `requires_action`: the calls the run waits for."
    )
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
    data: JsonObject


class EventList(BaseModel):
    data: list[EventOut]
