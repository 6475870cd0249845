"""Typed records the client returns. Unknown fields are kept (`model_extra`), so a newer server
does not break an older client."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Account",
    "AccountInfo",
    "Agent",
    "AgentAlias",
    "AgentConfig",
    "AgentDeleted",
    "AgentUsage",
    "AgentVersion",
    "AgentVersionDiff",
    "AgentVersionPage",
    "AliasDeleted",
    "AliasSplit",
    "Artifact",
    "ArtifactCreated",
    "Billing",
    "Block",
    "BlockDeleted",
    "BlockHistory",
    "BlockPage",
    "BlockVersion",
    "DailyUsage",
    "Deleted",
    "Domain",
    "DomainVerification",
    "Eval",
    "EvalAgent",
    "EvalAgentTotals",
    "EvalCase",
    "EvalCheck",
    "EvalDataset",
    "EvalDeleted",
    "EvalPage",
    "EvalResult",
    "EvalSummary",
    "File",
    "FileDeleted",
    "FilePage",
    "KeyInfo",
    "MemoryHistory",
    "MemoryHistoryEntry",
    "MemoryItem",
    "MemoryItemDeleted",
    "MemoryItemPage",
    "MemorySearchResult",
    "MessageDelta",
    "Page",
    "PageLinks",
    "PageMeta",
    "PatchOperation",
    "PendingToolCall",
    "Provider",
    "ProviderDeleted",
    "ProviderList",
    "RequiredAction",
    "Run",
    "RunCancelled",
    "RunCompleted",
    "RunError",
    "RunEvent",
    "RunFailed",
    "RunPage",
    "RunQueued",
    "RunRequiresAction",
    "RunRestarted",
    "RunStarted",
    "RunStatus",
    "RunStep",
    "Schedule",
    "ScheduleDeleted",
    "ScheduleFiring",
    "ScheduleFiringPage",
    "ScheduleNextFiring",
    "ScheduleNextFirings",
    "SchedulePage",
    "ScheduleUsage",
    "Space",
    "StreamedText",
    "SummaryBilling",
    "Thread",
    "ThreadCompaction",
    "ThreadCounts",
    "ThreadDeleted",
    "ThreadForkedFrom",
    "ThreadLastRun",
    "ThreadMessage",
    "ThreadMessagePage",
    "ThreadPage",
    "ThreadToolCall",
    "ToolCalled",
    "ToolReturned",
    "UsageCounters",
    "UsageReport",
    "VersionUsage",
    "Webhook",
    "WebhookDeleted",
    "WebhookDelivery",
    "parse_event",
]

T = TypeVar("T")
RunStatus = Literal["queued", "running", "requires_action", "completed", "failed", "cancelled"]
# Why a run was cancelled: a cancel request, a later prompt of its thread (`if_busy`), its
# thread's deletion, or its schedule firing again (`on_overlap: cancel_previous`).
CancelReason = Literal["client", "interrupt", "rollback", "superseded", "thread_deleted"]
# What a new prompt does when its thread has an unfinished run (`runs.create(if_busy=…)`).
IfBusy = Literal["enqueue", "reject", "interrupt", "rollback"]
ThreadStatus = Literal["idle", "busy", "requires_action"]
MessageRole = Literal["user", "assistant", "tool", "summary", "system"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


# --- domains and spaces (phpShort's shapes) -----------------------------------------------------
class DomainVerification(_Model):
    """What to publish in DNS (a TXT record `txt_name` whose text is `txt_value`) and what the
    last check found. `last_error`: `txt_missing`, `txt_mismatch`, `address_mismatch`,
    `dns_timeout`, `dns_error` (docs/guide/domains.md), None once verified or before any check."""

    txt_name: str
    txt_value: str
    last_error: str | None = None
    checked_at: datetime | None = None


class Domain(_Model):
    id: int
    name: str
    url: str
    index_page: str | None = None
    not_found_page: str | None = None
    created_at: datetime
    updated_at: datetime
    # atrium's, after phpShort's fields: a domain is served only once verified.
    verified: bool = False
    verification: DomainVerification | None = None


class Space(_Model):
    id: int
    name: str
    color: int
    created_at: datetime
    updated_at: datetime


class PageLinks(_Model):
    first: str | None = None
    last: str | None = None
    prev: str | None = None
    next: str | None = None


class PageMeta(_Model):
    current_page: int
    from_: int | None = Field(None, alias="from")
    last_page: int
    per_page: int
    to: int | None = None
    total: int
    path: str | None = None


class Page(_Model, Generic[T]):
    """One page of a Laravel paginator: `data`, `links`, `meta`."""

    data: list[T]
    links: PageLinks
    meta: PageMeta

    @property
    def has_next(self) -> bool:
        return self.meta.current_page < self.meta.last_page


class Deleted(_Model):
    """What deleting a domain or a space returns."""

    id: int
    object: str
    deleted: bool


# --- account --------------------------------------------------------------------------------------
class AccountInfo(_Model):
    id: int
    name: str


class KeyInfo(_Model):
    id: int
    tier: str


class Account(_Model):
    """Who the API key acts for: the account and the key's tier."""

    account: AccountInfo
    key: KeyInfo


# --- agents and analytics -------------------------------------------------------------------------
class AgentConfig(_Model):
    model: str
    temperature: float
    instructions: str = ""
    max_output_tokens: int | None = None
    # Built-in tools by name; MCP servers and functions as objects (header values "***").
    tools: list[str | dict[str, Any]] = Field(default_factory=list)
    # A JSON Schema (an object type): the runs' `result` is then such an object.
    output_schema: dict[str, Any] | None = None
    # Tokens of thread history before compaction; None: from the model's context window.
    context_budget: int | None = None
    # The agent's memory tools: `read`, `write` (namespace prefixes), `blocks`,
    # `require_approval`; None: no memory tools.
    memory: dict[str, Any] | None = None
    # Labels of the memory blocks rendered into every run's instructions.
    blocks: list[str] = Field(default_factory=list)


class Agent(_Model):
    agent_id: str
    name: str
    description: str
    version: int | None = None  # the live version's number (None from an older server)
    config: AgentConfig
    created_at: datetime
    updated_at: datetime


class AgentDeleted(_Model):
    agent_id: str
    deleted: bool


class AgentVersion(_Model):
    """One config an agent has had (never changed); `live`: the agent's current one."""

    agent_id: str
    version: int
    content_hash: str  # SHA-256 of the config's canonical JSON
    live: bool
    restored_from: int | None  # the version a restore copied
    config: AgentConfig
    created_at: datetime


class AgentVersionPage(_Model):
    """A page of an agent's versions, newest first; pass `next_cursor` as `cursor`."""

    data: list[AgentVersion]
    has_more: bool
    next_cursor: str | None = None


class PatchOperation(_Model):
    """One JSON Patch (RFC 6902) operation; `before`: the value a replace or remove drops."""

    op: Literal["add", "remove", "replace"]
    path: str
    value: Any = None
    before: Any = None


class AgentVersionDiff(_Model):
    """The patch that turns version `against`'s config into version `version`'s."""

    agent_id: str
    version: int
    against: int
    patch: list[PatchOperation]


class AliasSplit(_Model):
    version: int
    weight: float  # the share of runs (0 to 1) that use `version`


class AgentAlias(_Model):
    """`agent_id@name` runs `version`, or `split.version` for a `split.weight` share."""

    agent_id: str
    name: str
    version: int
    split: AliasSplit | None
    created_at: datetime
    updated_at: datetime


class AliasDeleted(_Model):
    agent_id: str
    name: str
    deleted: bool


class UsageCounters(_Model):
    runs: int
    completed: int
    failed: int
    cancelled: int
    input_tokens: int
    output_tokens: int
    credits: float
    requests: int
    requires_action: int = 0  # 0 from a server older than runs that wait


class DailyUsage(UsageCounters):
    date: date


class AgentUsage(UsageCounters):
    agent_id: str
    name: str


class VersionUsage(UsageCounters):
    version: int | None  # None: runs from before agents had versions


class UsageReport(_Model):
    start_date: date
    end_date: date
    agent_id: str | None = None
    totals: UsageCounters
    daily: list[DailyUsage]
    agents: list[AgentUsage]
    versions: list[VersionUsage] | None = None  # with `agent_id`: per version, newest first


# --- runs -----------------------------------------------------------------------------------------
class Billing(_Model):
    """What a run cost, in credits, and the usage behind it."""

    credits: float
    input_tokens: int
    output_tokens: int
    requests: int
    tool_calls: int


class RunError(_Model):
    code: str
    message: str


class Artifact(_Model):
    artifact_id: str
    run_id: str
    name: str
    mime_type: str
    size_bytes: int
    sha256: str
    created_at: datetime
    download_url: str


class File(_Model):
    """An uploaded file; `content_type` is what the server sniffed from its bytes."""

    file_id: str
    filename: str
    content_type: str
    size_bytes: int
    sha256: str
    created_at: datetime
    content_url: str


class FilePage(_Model):
    """A page of files, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[File]
    has_more: bool
    next_cursor: str | None


class FileDeleted(_Model):
    file_id: str
    deleted: Literal[True] = True


class PendingToolCall(_Model):
    """A call a `requires_action` run waits for: a function tool's (`kind="function"`: run it,
    send its output) or an MCP tool's that needs approval (`kind="approval"`)."""

    id: str
    kind: str
    name: str
    server_label: str | None = None
    arguments: Any = None


class RequiredAction(_Model):
    type: str = "tool_calls"
    expires_at: datetime
    tool_calls: list[PendingToolCall]


class BlockSeen(_Model):
    """A memory block version a run's instructions were rendered from."""

    label: str
    block_id: str
    version: int


class Run(_Model):
    """A run; `result`, `artifacts`, `billing` are set once it is finished, `error` if failed."""

    run_id: str
    thread_id: str
    agent_id: str
    status: RunStatus
    prompt: str = ""  # "" from a server older than the run body's prompt
    model: str = ""  # the effective model: the agent's, or the run's config
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    status_url: str
    events_url: str
    artifacts_url: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    # The input parts beside the prompt, files by reference (with their name, type, size).
    input: list[dict[str, Any]] | None = None
    schedule_id: str | None = None  # the schedule whose firing queued the run
    agent_version: int | None = None  # the agent version whose config the run executes
    # The memory blocks rendered into its instructions, at the versions it read.
    memory_blocks: list[BlockSeen] | None = None
    result: str | dict[str, Any] | None = None  # an object with an output schema
    artifacts: list[Artifact] | None = None
    billing: Billing | None = None
    error: RunError | None = None
    # Once cancelled: why (`interrupt` and `rollback`: a later prompt of the thread).
    cancel_reason: CancelReason | None = None
    # While `requires_action`: what the run waits for (answer with `runs.submit_actions`).
    required_action: RequiredAction | None = None
    # Only on the run `create` returns when it was given a `webhook_url`.
    webhook_secret: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def waiting(self) -> bool:
        """The run waits for its caller's actions (`required_action`)."""
        return self.status == "requires_action"


class RunPage(_Model):
    """A page of runs, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[Run]
    has_more: bool
    next_cursor: str | None = None


class RunEvent(_Model):
    """One event of a run's stream. `id` is its sequence number in the run (SSE `id:`), `event`
    its kind, `data` the raw JSON payload; subclasses give the known kinds typed fields."""

    kind: ClassVar[str] = ""
    terminal: ClassVar[bool] = False

    id: int
    event: str
    run_id: str
    created_at: datetime
    data: dict[str, Any]


class RunQueued(RunEvent):
    kind = "run.queued"
    status: str = "queued"


class RunStarted(RunEvent):
    kind = "run.started"
    status: str = "running"
    attempt: int | None = None


class RunRestarted(RunEvent):
    """The run is executed again (its worker was lost): what earlier attempts streamed is
    superseded, this attempt's events follow (`StreamedText` starts over)."""

    kind = "run.restarted"
    attempt: int


class RunStep(RunEvent):
    """A model request (`step="model_request"`) or a tool call and its result."""

    kind = "run.step"
    step: str
    index: int | None = None
    tool: str | None = None
    tool_call_id: str | None = None
    args: dict[str, Any] | None = None


class MessageDelta(RunEvent):
    """Model text as it arrives."""

    kind = "message.delta"
    text: str


class ArtifactCreated(RunEvent):
    kind = "artifact.created"
    artifact_id: str
    name: str
    mime_type: str
    size_bytes: int
    sha256: str


class ToolCalled(RunEvent):
    kind = "tool.called"
    tool_call_id: str
    name: str
    server_label: str | None = None
    arguments: Any = None


class ToolReturned(RunEvent):
    kind = "tool.returned"
    tool_call_id: str
    name: str
    server_label: str | None = None
    output: str = ""
    is_error: bool = False


class RunRequiresAction(RunEvent):
    """The run waits for its caller (not terminal: answered, it is queued again)."""

    kind = "run.requires_action"
    status: str = "requires_action"
    required_action: RequiredAction


class RunCompleted(RunEvent):
    kind = "run.completed"
    terminal = True
    status: str = "completed"
    result: str | dict[str, Any] = ""
    billing: Billing | None = None


class RunFailed(RunEvent):
    kind = "run.failed"
    terminal = True
    status: str = "failed"
    error: RunError | None = None
    billing: Billing | None = None


class RunCancelled(RunEvent):
    kind = "run.cancelled"
    terminal = True
    status: str = "cancelled"
    billing: Billing | None = None
    cancel_reason: CancelReason | None = None


_EVENT_TYPES: dict[str, type[RunEvent]] = {
    cls.kind: cls
    for cls in (
        RunQueued,
        RunStarted,
        RunRestarted,
        RunStep,
        MessageDelta,
        ArtifactCreated,
        ToolCalled,
        ToolReturned,
        RunRequiresAction,
        RunCompleted,
        RunFailed,
        RunCancelled,
    )
}


class StreamedText:
    """The model text a run's stream has carried so far: its `MessageDelta` texts joined, and
    emptied on `RunRestarted`, so a re-executed run's answer is not kept twice.

        text = StreamedText()
        for event in atrium.runs.stream(run_id):
            text.add(event)
        print(text.text)
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self.attempt = 1

    def add(self, event: RunEvent) -> bool:
        """Take one event; True when it dropped the text so far (a restart)."""
        if isinstance(event, MessageDelta):
            self._parts.append(event.text)
        elif isinstance(event, RunRestarted):
            self.attempt = event.attempt
            dropped = bool(self._parts)
            self._parts.clear()
            return dropped
        return False

    @property
    def text(self) -> str:
        return "".join(self._parts)


def parse_event(event_id: int, kind: str, data: dict[str, Any]) -> RunEvent:
    """The typed event for one frame; an unknown kind stays a plain `RunEvent`."""
    cls = _EVENT_TYPES.get(kind, RunEvent)
    return cls.model_validate({**data, "id": event_id, "event": kind, "data": data})


# --- webhooks -------------------------------------------------------------------------------------
class Webhook(_Model):
    """A webhook endpoint. `secret` (`whsec_…`) is only set on the object `create` returns."""

    webhook_id: str
    url: str
    events: list[str]
    created_at: datetime
    secret: str | None = None


class WebhookDeleted(_Model):
    webhook_id: str
    deleted: bool


class WebhookDelivery(_Model):
    """One message to one endpoint; `delivery_id` is the `webhook-id` header of its attempts."""

    delivery_id: str
    webhook_id: str | None = None  # None: the run's own webhook_url
    run_id: str | None = None  # None: a schedule's skipped firing (no run)
    event: str
    url: str
    status: Literal["pending", "delivered", "failed"]
    attempts: int
    response_status: int | None = None
    response_body: str | None = None
    error: str | None = None
    next_attempt_at: datetime | None = None
    created_at: datetime
    delivered_at: datetime | None = None


class DeliveryPage(_Model):
    """A page of webhook deliveries, newest first; pass `next_cursor` as `cursor` for the next."""

    data: list[WebhookDelivery]
    has_more: bool
    next_cursor: str | None = None


# --- providers ------------------------------------------------------------------------------------
class Provider(_Model):
    """A named OpenAI-compatible server of the account (`openai-compatible:<name>/<model>`).
    Its `api_key` and header values are write-only: the server shows them as `"***"`."""

    provider_id: str
    name: str
    base_url: str
    api_key: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    created_at: datetime
    updated_at: datetime


class ProviderList(_Model):
    """The account's providers, and the names of the server's own (`ATRIUM_PROVIDERS`), which
    the account may use too."""

    data: list[Provider]
    server_providers: list[str] = Field(default_factory=list)


class ProviderDeleted(_Model):
    provider_id: str
    name: str
    deleted: bool


# --- schedules ------------------------------------------------------------------------------------
class Schedule(_Model):
    """A prompt run at each fire time of `cron` in `timezone`; `next_fire_at` is None while
    paused or once no fire time is left."""

    schedule_id: str
    agent_id: str
    prompt: str
    cron: str
    timezone: str
    thread: str  # "new", or the thread every firing continues
    metadata: dict[str, Any]
    config: dict[str, Any] | None
    starts_at: datetime | None
    ends_at: datetime | None
    paused: bool
    on_overlap: Literal["skip", "enqueue", "cancel_previous"]
    on_missed: Literal["skip", "run_once", "run_all"]
    max_credits_per_day: float | None
    next_fire_at: datetime | None
    created_at: datetime
    updated_at: datetime


class SchedulePage(_Model):
    """A page of schedules, newest first; pass `next_cursor` as `cursor` for the next."""

    data: list[Schedule]
    has_more: bool
    next_cursor: str | None = None


class ScheduleDeleted(_Model):
    schedule_id: str
    deleted: bool


class ScheduleNextFiring(_Model):
    fire_at: datetime  # UTC
    local_time: datetime  # the same instant in the schedule's zone


class ScheduleNextFirings(_Model):
    schedule_id: str
    timezone: str
    data: list[ScheduleNextFiring]


class ScheduleFiring(_Model):
    """One fire time of a schedule: `fired` with its run, or `skipped` with the reason."""

    firing_id: str
    schedule_id: str
    fire_at: datetime
    trigger: Literal["cron", "manual"]
    status: Literal["fired", "skipped"]
    # missed, catch_up_limit, overlap, credit_cap, thread_missing, agent_missing
    reason: str | None
    detail: str | None
    run_id: str | None
    created_at: datetime


class ScheduleFiringPage(_Model):
    """A page of firings, latest fire time first; pass `next_cursor` as `cursor`."""

    data: list[ScheduleFiring]
    has_more: bool
    next_cursor: str | None = None


class ScheduleUsage(_Model):
    """What a schedule's finished runs used, per UTC day of the range."""

    schedule_id: str
    start_date: date
    end_date: date
    totals: UsageCounters
    daily: list[DailyUsage]


# --- threads --------------------------------------------------------------------------------------
class ThreadLastRun(_Model):
    """A thread's newest run (`runs.get(id)` has the rest of it)."""

    id: str
    status: str
    agent_id: str
    created_at: datetime


class ThreadCounts(_Model):
    """A thread's runs (in any status) and the items its conversation lists."""

    runs: int
    messages: int


class ThreadForkedFrom(_Model):
    """The thread and run a fork was made at (`run_id` None: the original had no run in its
    history); the original may have been deleted since."""

    thread_id: str
    run_id: str | None


class Thread(_Model):
    """A conversation. `status`: `requires_action` while one of its runs waits for its caller,
    `busy` while one is queued or running, else `idle`. `counts` is None in lists (`get` has
    it)."""

    id: str
    object: Literal["thread"] = "thread"
    created_at: datetime
    metadata: dict[str, Any]
    status: ThreadStatus
    last_run: ThreadLastRun | None
    counts: ThreadCounts | None
    forked_from: ThreadForkedFrom | None


class ThreadPage(_Model):
    """A page of threads, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[Thread]
    has_more: bool
    next_cursor: str | None


class ThreadToolCall(_Model):
    """A tool call the model made: `arguments` a JSON object, or the model's raw text."""

    id: str
    name: str
    arguments: Any


class ThreadMessage(_Model):
    """One item of a thread's conversation as the model sees it. `user`: a prompt;
    `assistant`: one model response (`content` its text, `tool_calls` its calls); `tool`: one
    tool's result (`tool_call_id`, `name`, `is_error`); `summary`: the summary the model is
    given in place of every earlier item marked `compacted`; `system`: a stored system prompt.
    `run_id` None: an item of a fork's copied history."""

    id: str
    object: Literal["thread.message"] = "thread.message"
    run_id: str | None
    role: MessageRole
    content: Any = None
    tool_calls: list[ThreadToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    is_error: bool | None = None
    compacted: bool
    created_at: datetime


class ThreadMessagePage(_Model):
    """A page of a conversation, oldest first; pass `next_cursor` as `cursor` for the next."""

    data: list[ThreadMessage]
    has_more: bool
    next_cursor: str | None


class ThreadDeleted(_Model):
    id: str
    object: Literal["thread"] = "thread"
    deleted: Literal[True] = True


class SummaryBilling(_Model):
    """What a compaction's summarising request cost: a line of its own, apart from any run's."""

    credits: float
    input_tokens: int
    output_tokens: int


class ThreadCompaction(_Model):
    """What `threads.compact` did: `compacted` true with the summary (`summary_id`, `text`) now
    given to the model in place of the history through `through_run_id`, or false when nothing
    was older than the newest runs."""

    thread_id: str
    object: Literal["thread.compaction"] = "thread.compaction"
    compacted: bool
    summary_id: str | None = None
    text: str | None = None
    through_run_id: str | None = None
    billing: SummaryBilling | None = None


class MemoryItem(_Model):
    """A remembered item: a JSON `value` under (`namespace`, `key`), `text` what search reads."""

    item_id: str
    namespace: list[str]
    key: str
    value: Any
    text: str | None
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime


class MemoryItemPage(_Model):
    """A page of memory items, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[MemoryItem]
    has_more: bool
    next_cursor: str | None


class MemorySearchResult(_Model):
    """The items a search found, best first."""

    data: list[MemoryItem]


class MemoryItemDeleted(_Model):
    item_id: str
    deleted: bool = True


class MemoryHistoryEntry(_Model):
    """One write or delete of an item: by an API key (`api_key_id`) or by a run's tool call
    (`run_id`, `tool_call_id`)."""

    action: str
    namespace: list[str]
    key: str
    value: Any
    api_key_id: int | None
    run_id: str | None
    tool_call_id: str | None
    created_at: datetime


class MemoryHistory(_Model):
    """Every write and delete of an item, newest first."""

    item_id: str
    data: list[MemoryHistoryEntry]


class Block(_Model):
    """A memory block: a named text (at most `limit` characters) rendered into the runs of the
    agents whose `config.blocks` list its label; `version` grows with every change."""

    block_id: str
    label: str
    value: str
    limit: int
    chars: int
    version: int
    created_at: datetime
    updated_at: datetime


class BlockPage(_Model):
    """A page of blocks, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[Block]
    has_more: bool
    next_cursor: str | None


class BlockDeleted(_Model):
    block_id: str
    label: str
    deleted: bool = True


class BlockVersion(_Model):
    """One version of a block: made by an API key (`api_key_id`) or a run's tool call."""

    block_id: str
    label: str
    version: int
    action: str
    value: str
    limit: int
    api_key_id: int | None
    run_id: str | None
    tool_call_id: str | None
    created_at: datetime


class BlockHistory(_Model):
    """Versions of the blocks that had a label, newest first."""

    label: str
    data: list[BlockVersion]
    has_more: bool
    next_cursor: str | None


# --- evals ---------------------------------------------------------------------------------------
class EvalDataset(_Model):
    name: str
    sha256: str


class EvalCheck(_Model):
    """One check of a case, as the client scored it."""

    type: Literal["exact", "contains", "json_schema", "judge"]
    passed: bool
    reason: str | None = None
    judge_run_id: str | None = None


class EvalAgent(_Model):
    ref: str  # the agent as the eval named it (`agt_…@v2`)
    agent_id: str
    versions: list[int]


class EvalResult(_Model):
    """A case's result on one agent; credits, latency and version are the server's, from the run."""

    agent: str
    run_id: str
    agent_version: int | None
    status: str
    passed: bool
    checks: list[EvalCheck]
    credits: float
    latency_ms: int | None


class EvalCase(_Model):
    case_id: str
    results: list[EvalResult]


class EvalAgentTotals(_Model):
    agent: str
    passed: int
    cases: int
    pass_rate: float
    credits: float
    p50_latency_ms: int | None


class Eval(_Model):
    """A stored eval: every case's result on every agent, side by side."""

    eval_id: str
    dataset: EvalDataset
    agents: list[EvalAgent]
    cases: list[EvalCase]
    totals: list[EvalAgentTotals]
    created_at: datetime


class EvalSummary(_Model):
    eval_id: str
    dataset: EvalDataset
    agents: list[EvalAgent]
    cases: int
    totals: list[EvalAgentTotals]
    created_at: datetime


class EvalPage(_Model):
    """A page of evals, newest first; pass `next_cursor` as `cursor` for the next one."""

    data: list[EvalSummary]
    has_more: bool
    next_cursor: str | None


class EvalDeleted(_Model):
    eval_id: str
    deleted: Literal[True] = True
