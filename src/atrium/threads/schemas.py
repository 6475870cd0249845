"""Request and response bodies of `/api/v1/public/threads` (docs/guide/threads.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ThreadStatus = Literal["idle", "busy", "requires_action"]
MessageRole = Literal["user", "assistant", "tool", "summary", "system"]


class ThreadCreate(BaseModel):
    """A new, empty thread; its first run is created with its `thread_id`."""

    model_config = ConfigDict(extra="forbid")

    metadata: dict[str, Any] | None = Field(
        None,
        description="Free-form JSON kept with the thread (at most ATRIUM_RUN_MAX_METADATA_BYTES "
        "as JSON); lists filter on its string values with `metadata[key]=value`.",
    )


class ThreadFork(BaseModel):
    """Where to fork: the new thread's history is the original's up to and including
    `at_run_id` (default: the original's last run in its history)."""

    model_config = ConfigDict(extra="forbid")

    at_run_id: str | None = Field(
        None, description="A run of the thread that is in its history (a completed run)."
    )
    metadata: dict[str, Any] | None = Field(
        None, description="The new thread's metadata; default: a copy of the original's."
    )


class LastRun(BaseModel):
    """The thread's newest run."""

    id: str
    status: str
    agent_id: str
    created_at: str


class ThreadCounts(BaseModel):
    runs: int = Field(description="Every run of the thread, in any status.")
    messages: int = Field(
        description="The items `GET /threads/{id}/messages` lists (summaries and the messages "
        "they replace included)."
    )


class ForkedFrom(BaseModel):
    """The thread and run a fork was made at (`run_id` null: a fork of a thread with no run in
    its history); the original may have been deleted since."""

    thread_id: str
    run_id: str | None


class ThreadOut(BaseModel):
    """A thread. `status`: `requires_action` while one of its runs waits for its caller, `busy`
    while one is queued or running, else `idle`."""

    id: str
    object: Literal["thread"] = "thread"
    created_at: str
    metadata: dict[str, Any]
    status: ThreadStatus
    last_run: LastRun | None
    counts: ThreadCounts | None = Field(
        description="In `GET /threads/{id}` and the create and fork responses; null in lists "
        "(counting the messages reads the whole conversation)."
    )
    forked_from: ForkedFrom | None


class ThreadList(BaseModel):
    """A page of threads, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[ThreadOut]
    has_more: bool
    next_cursor: str | None


class ToolCallOut(BaseModel):
    """A tool call the model made."""

    id: str
    name: str
    arguments: Any = Field(description="The arguments: a JSON object, or the model's raw text.")


class ThreadMessage(BaseModel):
    """One item of the conversation as the model sees it. `user`: a prompt; `assistant`: one
    model response (its text in `content`, its calls in `tool_calls`); `tool`: one tool's result
    (`tool_call_id`, `name`, `is_error`); `summary`: compaction's summary, which the model is
    given in place of every item listed before it with `compacted: true`; `system`: a system
    prompt stored in the history. Fields that do not apply to the role are absent."""

    id: str = Field(
        description="`<source>.<n>`: the n-th item of a run, a fork's base or a summary."
    )
    object: Literal["thread.message"] = "thread.message"
    run_id: str | None = Field(
        description="The run that added it (null: the fork's copied base). For a summary, the "
        "last run it covers (null: it covers only the base)."
    )
    role: MessageRole
    content: Any = Field(
        None, description="Text; a tool's result as it returned it (text or any JSON value)."
    )
    tool_calls: list[ToolCallOut] | None = None
    tool_call_id: str | None = None
    name: str | None = Field(None, description="The tool's name (role `tool`).")
    is_error: bool | None = Field(
        None, description="Role `tool`: the call failed, was retried or denied."
    )
    compacted: bool = Field(
        description="The model no longer sees this item: a later summary stands in for it."
    )
    created_at: str


class ThreadMessageList(BaseModel):
    """A page of the conversation, oldest first; pass `next_cursor` as `cursor` for the next."""

    data: list[ThreadMessage]
    has_more: bool
    next_cursor: str | None


class ThreadDeleted(BaseModel):
    id: str
    object: Literal["thread"] = "thread"
    deleted: Literal[True] = True


class SummaryBilling(BaseModel):
    """What the summarising request cost: its own line, apart from any run's."""

    credits: float
    input_tokens: int
    output_tokens: int


class ThreadCompaction(BaseModel):
    """The outcome of `POST /threads/{id}/compact`: the summary now standing in for the
    thread's oldest messages, or `compacted: false` when there was nothing older than the
    newest runs to summarise."""

    thread_id: str
    object: Literal["thread.compaction"] = "thread.compaction"
    compacted: bool
    summary_id: str | None = None
    text: str | None = None
    through_run_id: str | None = Field(None, description="The last run the summary covers.")
    billing: SummaryBilling | None = None
