"""Every operation of every group as a `Call`: built once, sent by the sync or async client."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from datetime import date
from typing import IO, Any, Generic, Literal, TypedDict, TypeVar, Unpack

import httpx
from pydantic import BaseModel

from atrium.client._core import (
    AGENTS_PREFIX,
    DOMAINS_PREFIX,
    IDEMPOTENCY_HEADER,
    RUNS_PREFIX,
    Call,
    compact,
    form,
    generated_idempotency_key,
)
from atrium.client._core import model as parse_model
from atrium.client._core import model_list as parse_list
from atrium.client.records import (
    Account,
    Agent,
    AgentAlias,
    AgentDeleted,
    AgentVersion,
    AgentVersionDiff,
    AgentVersionPage,
    AliasDeleted,
    Artifact,
    Block,
    BlockDeleted,
    BlockHistory,
    BlockPage,
    Deleted,
    DeliveryPage,
    Domain,
    Eval,
    EvalDeleted,
    EvalPage,
    File,
    FileDeleted,
    FilePage,
    IfBusy,
    MemoryHistory,
    MemoryItem,
    MemoryItemDeleted,
    MemoryItemPage,
    MemorySearchResult,
    Page,
    PendingToolCall,
    Provider,
    ProviderDeleted,
    ProviderList,
    RequiredAction,
    Run,
    RunEvent,
    RunPage,
    Schedule,
    ScheduleDeleted,
    ScheduleFiring,
    ScheduleFiringPage,
    ScheduleNextFirings,
    SchedulePage,
    ScheduleUsage,
    Space,
    Thread,
    ThreadCompaction,
    ThreadDeleted,
    ThreadMessagePage,
    ThreadPage,
    UsageReport,
    Webhook,
    WebhookDeleted,
    WebhookDelivery,
    parse_event,
)

SortBy = Literal["id", "name"]
SortOrder = Literal["desc", "asc"]
R = TypeVar("R", bound=BaseModel)


class ListFilters(TypedDict, total=False):
    """The filters of a phpShort record list (domains, spaces)."""

    search: str | None
    search_by: str | None
    sort_by: SortBy | None
    sort: SortOrder | None
    per_page: int | None


class RecordCalls(Generic[R]):
    """The calls of one phpShort record type (domains, spaces): one path, form bodies, the
    record under `data`, Laravel pages."""

    def __init__(self, path: str, record: type[R]) -> None:
        self.path = path
        self._one = parse_model(record, key="data")
        self._page = parse_model(Page[record])  # type: ignore[valid-type]

    def list(self, page: int | None = None, **filters: Unpack[ListFilters]) -> Call[Page[R]]:
        return Call("GET", self.path, self._page, params=compact(**filters, page=page))

    def get(self, record_id: int) -> Call[R]:
        return Call("GET", f"{self.path}/{record_id}", self._one)

    def create(self, **fields: Any) -> Call[R]:
        return Call("POST", self.path, self._one, form=form(**fields))

    def update(self, record_id: int, **fields: Any) -> Call[R]:
        return Call("PATCH", f"{self.path}/{record_id}", self._one, form=form(**fields))

    def delete(self, record_id: int) -> Call[Deleted]:
        return Call("DELETE", f"{self.path}/{record_id}", parse_model(Deleted))


class DomainCalls(RecordCalls[Domain]):
    """The domain calls: a record's, and the DNS check that verifies a domain."""

    def verify(self, domain_id: int) -> Call[Domain]:
        return Call("POST", f"{self.path}/{domain_id}/verify", self._one)


domains = DomainCalls(f"{DOMAINS_PREFIX}/domains", Domain)
spaces = RecordCalls(f"{DOMAINS_PREFIX}/spaces", Space)


# --- account, agents, analytics -------------------------------------------------------------------
def get_account() -> Call[Account]:
    return Call("GET", f"{AGENTS_PREFIX}/account", parse_model(Account))


def list_agents() -> Call[list[Agent]]:
    return Call("GET", f"{AGENTS_PREFIX}/agents", parse_list(Agent))


def create_agent(
    name: str, description: str | None = None, config: Mapping[str, Any] | None = None
) -> Call[Agent]:
    body = compact(name=name, description=description, config=dict(config) if config else None)
    return Call("POST", f"{AGENTS_PREFIX}/agents", parse_model(Agent), json=body)


def get_agent(agent_id: str) -> Call[Agent]:
    return Call("GET", f"{AGENTS_PREFIX}/agents/{agent_id}", parse_model(Agent))


def update_agent(
    agent_id: str,
    name: str | None = None,
    description: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> Call[Agent]:
    body = compact(name=name, description=description, config=dict(config) if config else None)
    return Call("PUT", f"{AGENTS_PREFIX}/agents/{agent_id}", parse_model(Agent), json=body)


def delete_agent(agent_id: str) -> Call[AgentDeleted]:
    return Call("DELETE", f"{AGENTS_PREFIX}/agents/{agent_id}", parse_model(AgentDeleted))


def list_versions(
    agent_id: str, limit: int | None = None, cursor: str | None = None
) -> Call[AgentVersionPage]:
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/versions"
    return Call(
        "GET", path, parse_model(AgentVersionPage), params=compact(limit=limit, cursor=cursor)
    )


def get_version(agent_id: str, version: int) -> Call[AgentVersion]:
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/versions/{version}"
    return Call("GET", path, parse_model(AgentVersion))


def diff_versions(agent_id: str, version: int, against: int) -> Call[AgentVersionDiff]:
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/versions/{version}/diff"
    return Call("GET", path, parse_model(AgentVersionDiff), params={"against": against})


def restore_version(agent_id: str, version: int) -> Call[AgentVersion]:
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/versions/{version}/restore"
    return Call("POST", path, parse_model(AgentVersion))


def list_aliases(agent_id: str) -> Call[list[AgentAlias]]:
    return Call("GET", f"{AGENTS_PREFIX}/agents/{agent_id}/aliases", parse_list(AgentAlias))


def get_alias(agent_id: str, name: str) -> Call[AgentAlias]:
    return Call("GET", f"{AGENTS_PREFIX}/agents/{agent_id}/aliases/{name}", parse_model(AgentAlias))


def put_alias(
    agent_id: str,
    name: str,
    version: int,
    split_version: int | None = None,
    split_weight: float | None = None,
) -> Call[AgentAlias]:
    body: dict[str, Any] = {"version": version}
    if split_version is not None or split_weight is not None:
        body["split"] = compact(version=split_version, weight=split_weight)
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/aliases/{name}"
    return Call("PUT", path, parse_model(AgentAlias), json=body)


def delete_alias(agent_id: str, name: str) -> Call[AliasDeleted]:
    path = f"{AGENTS_PREFIX}/agents/{agent_id}/aliases/{name}"
    return Call("DELETE", path, parse_model(AliasDeleted))


def usage(
    start_date: date | str | None = None,
    end_date: date | str | None = None,
    agent_id: str | None = None,
) -> Call[UsageReport]:
    params = compact(start_date=start_date, end_date=end_date, agent_id=agent_id)
    return Call("GET", f"{AGENTS_PREFIX}/analytics/usage", parse_model(UsageReport), params=params)


# --- runs -----------------------------------------------------------------------------------------
def create_run(
    prompt: str,
    agent_id: str | None = None,
    thread_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
    webhook_url: str | None = None,
    config: Mapping[str, Any] | None = None,
    if_busy: IfBusy | None = None,
    input: Sequence[Mapping[str, Any]] | None = None,
) -> Call[Run]:
    body = compact(
        prompt=prompt,
        input=[dict(part) for part in input] if input is not None else None,
        agent_id=agent_id,
        thread_id=thread_id,
        metadata=dict(metadata) if metadata is not None else None,
        webhook_url=webhook_url,
        config=dict(config) if config is not None else None,
        if_busy=if_busy,
    )
    headers = {IDEMPOTENCY_HEADER: idempotency_key or generated_idempotency_key()}
    return Call("POST", RUNS_PREFIX, parse_model(Run), json=body, headers=headers)


def submit_actions(
    run_id: str,
    tool_outputs: Mapping[str, Any] | None = None,
    approvals: Mapping[str, bool] | None = None,
    reasons: Mapping[str, str] | None = None,
    idempotency_key: str | None = None,
    failed: Collection[str] = (),
) -> Call[Run]:
    reasons = reasons or {}
    body = {
        "tool_outputs": [
            {"tool_call_id": call_id, "output": output}
            | ({"is_error": True} if call_id in failed else {})
            for call_id, output in (tool_outputs or {}).items()
        ],
        "approvals": [
            compact(tool_call_id=call_id, approve=approve, reason=reasons.get(call_id))
            for call_id, approve in (approvals or {}).items()
        ],
    }
    headers = {IDEMPOTENCY_HEADER: idempotency_key or generated_idempotency_key()}
    return Call(
        "POST", f"{RUNS_PREFIX}/{run_id}/actions", parse_model(Run), json=body, headers=headers
    )


def tool_arguments(call: PendingToolCall) -> dict[str, Any]:
    """A function call's arguments as keyword arguments (a model may send something else)."""
    arguments = call.arguments
    if not isinstance(arguments, dict):
        raise TypeError(f"the model sent arguments that are not an object: {arguments!r}")
    return arguments


def tool_output(value: Any) -> Any:
    """A function's return value as an output: JSON as it is, anything else as its text."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return str(value)
    return value


def denial_reasons(approvals: Mapping[str, bool]) -> dict[str, str]:
    return {
        call_id: "the caller did not approve this call"
        for call_id, approved in approvals.items()
        if not approved
    }


def actions_key(action: RequiredAction) -> str:
    """An Idempotency-Key for answering this wait: the same for every retry of the answer."""
    ids = ",".join(sorted(call.id for call in action.tool_calls))
    return "answer-" + hashlib.sha256(f"{action.expires_at.isoformat()}|{ids}".encode()).hexdigest()


def get_run(run_id: str) -> Call[Run]:
    return Call("GET", f"{RUNS_PREFIX}/{run_id}", parse_model(Run))


def list_runs(
    status: str | None = None,
    agent_id: str | None = None,
    thread_id: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
    schedule_id: str | None = None,
    agent_version: int | None = None,
) -> Call[RunPage]:
    params = compact(
        status=status,
        agent_id=agent_id,
        thread_id=thread_id,
        schedule_id=schedule_id,
        agent_version=agent_version,
        limit=limit,
        cursor=cursor,
    )
    return Call("GET", RUNS_PREFIX, parse_model(RunPage), params=params)


def cancel_run(run_id: str) -> Call[Run]:
    return Call("POST", f"{RUNS_PREFIX}/{run_id}/cancel", parse_model(Run))


def _parse_events(response: httpx.Response) -> list[RunEvent]:
    return [
        parse_event(int(item["id"]), str(item["event"]), dict(item["data"]))
        for item in response.json()["data"]
    ]


def run_events(run_id: str, after: int | None = None) -> Call[list[RunEvent]]:
    """The events so far, as JSON (no streaming); `after` skips events up to that id."""
    headers = {"Accept": "application/json"}
    if after:
        headers["Last-Event-ID"] = str(after)
    return Call("GET", f"{RUNS_PREFIX}/{run_id}/events", _parse_events, headers=headers)


def list_artifacts(run_id: str) -> Call[list[Artifact]]:
    return Call("GET", f"{RUNS_PREFIX}/{run_id}/artifacts", parse_list(Artifact))


def _content(response: httpx.Response) -> bytes:
    return response.content


def artifact_content(run_id: str, artifact_id: str) -> Call[bytes]:
    path = artifact_path(run_id, artifact_id)
    return Call("GET", path, _content, headers={"Accept": "*/*"})


def artifact_path(run_id: str, artifact_id: str) -> str:
    return f"{RUNS_PREFIX}/{run_id}/artifacts/{artifact_id}/content"


# --- webhooks -------------------------------------------------------------------------------------
def create_webhook(url: str, events: list[str] | None = None) -> Call[Webhook]:
    body = compact(url=url, events=events)
    return Call("POST", f"{AGENTS_PREFIX}/webhooks", parse_model(Webhook), json=body)


def list_webhooks() -> Call[list[Webhook]]:
    return Call("GET", f"{AGENTS_PREFIX}/webhooks", parse_list(Webhook))


def get_webhook(webhook_id: str) -> Call[Webhook]:
    return Call("GET", f"{AGENTS_PREFIX}/webhooks/{webhook_id}", parse_model(Webhook))


def delete_webhook(webhook_id: str) -> Call[WebhookDeleted]:
    path = f"{AGENTS_PREFIX}/webhooks/{webhook_id}"
    return Call("DELETE", path, parse_model(WebhookDeleted))


def webhook_deliveries(
    webhook_id: str | None = None, run_id: str | None = None, limit: int | None = None
) -> Call[list[WebhookDelivery]]:
    """Deliveries to one endpoint, or (no `webhook_id`) all of the account's, e.g. of a run."""
    path = (
        f"{AGENTS_PREFIX}/webhooks/{webhook_id}/deliveries"
        if webhook_id is not None
        else f"{AGENTS_PREFIX}/webhooks/deliveries"
    )
    params = compact(run_id=run_id, limit=limit)
    return Call("GET", path, parse_list(WebhookDelivery), params=params)


def webhook_delivery_page(
    webhook_id: str | None, run_id: str | None, limit: int | None, cursor: str | None
) -> Call[DeliveryPage]:
    """A page of `webhook_deliveries`, with the cursor of the next one."""
    listing = webhook_deliveries(webhook_id, run_id, limit)
    params = {**(listing.params or {}), **compact(cursor=cursor)}
    return Call("GET", listing.path, parse_model(DeliveryPage), params=params)


# --- providers ------------------------------------------------------------------------------------
PROVIDERS_PATH = f"{AGENTS_PREFIX}/providers"


def create_provider(
    name: str,
    base_url: str,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Call[Provider]:
    body = compact(
        name=name,
        base_url=base_url,
        api_key=api_key,
        headers=dict(headers) if headers is not None else None,
    )
    return Call("POST", PROVIDERS_PATH, parse_model(Provider), json=body)


def list_providers() -> Call[ProviderList]:
    return Call("GET", PROVIDERS_PATH, parse_model(ProviderList))


def get_provider(provider: str) -> Call[Provider]:
    return Call("GET", f"{PROVIDERS_PATH}/{provider}", parse_model(Provider))


def update_provider(
    provider: str,
    name: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    headers: Mapping[str, str] | None = None,
    remove_api_key: bool = False,
) -> Call[Provider]:
    body = compact(
        name=name,
        base_url=base_url,
        api_key=api_key,
        headers=dict(headers) if headers is not None else None,
    )
    if remove_api_key:
        body["api_key"] = None
    return Call("PUT", f"{PROVIDERS_PATH}/{provider}", parse_model(Provider), json=body)


def delete_provider(provider: str) -> Call[ProviderDeleted]:
    return Call("DELETE", f"{PROVIDERS_PATH}/{provider}", parse_model(ProviderDeleted))


# --- files ----------------------------------------------------------------------------------------
FILES_PATH = "/api/v1/public/files"


def upload_file(filename: str, source: IO[bytes], content_type: str) -> Call[File]:
    """`source` is sent as it is read, in the multipart field `file`."""
    files = {"file": (filename, source, content_type)}
    return Call("POST", FILES_PATH, parse_model(File), files=files)


def list_files(limit: int | None = None, cursor: str | None = None) -> Call[FilePage]:
    return Call(
        "GET", FILES_PATH, parse_model(FilePage), params=compact(limit=limit, cursor=cursor)
    )


def get_file(file_id: str) -> Call[File]:
    return Call("GET", f"{FILES_PATH}/{file_id}", parse_model(File))


def delete_file(file_id: str) -> Call[FileDeleted]:
    return Call("DELETE", f"{FILES_PATH}/{file_id}", parse_model(FileDeleted))


def file_content(file_id: str) -> Call[bytes]:
    return Call("GET", file_path(file_id), _content, headers={"Accept": "*/*"})


def file_path(file_id: str) -> str:
    return f"{FILES_PATH}/{file_id}/content"


# --- threads --------------------------------------------------------------------------------------
THREADS_PATH = "/api/v1/public/threads"


def create_thread(metadata: Mapping[str, Any] | None = None) -> Call[Thread]:
    body = compact(metadata=dict(metadata) if metadata is not None else None)
    return Call("POST", THREADS_PATH, parse_model(Thread), json=body)


def list_threads(
    agent_id: str | None = None,
    metadata: Mapping[str, str] | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[ThreadPage]:
    """`metadata`: only threads whose metadata has each key with that string value."""
    params: dict[str, str | int] = compact(agent_id=agent_id, limit=limit, cursor=cursor)
    params.update({f"metadata[{key}]": value for key, value in (metadata or {}).items()})
    return Call("GET", THREADS_PATH, parse_model(ThreadPage), params=params)


def get_thread(thread_id: str) -> Call[Thread]:
    return Call("GET", f"{THREADS_PATH}/{thread_id}", parse_model(Thread))


def thread_messages(
    thread_id: str, limit: int | None = None, cursor: str | None = None
) -> Call[ThreadMessagePage]:
    params = compact(limit=limit, cursor=cursor)
    path = f"{THREADS_PATH}/{thread_id}/messages"
    return Call("GET", path, parse_model(ThreadMessagePage), params=params)


def fork_thread(
    thread_id: str, at_run_id: str | None = None, metadata: Mapping[str, Any] | None = None
) -> Call[Thread]:
    body = compact(at_run_id=at_run_id, metadata=dict(metadata) if metadata is not None else None)
    return Call("POST", f"{THREADS_PATH}/{thread_id}/fork", parse_model(Thread), json=body)


def delete_thread(thread_id: str) -> Call[ThreadDeleted]:
    return Call("DELETE", f"{THREADS_PATH}/{thread_id}", parse_model(ThreadDeleted))


def compact_thread(thread_id: str) -> Call[ThreadCompaction]:
    path = f"{THREADS_PATH}/{thread_id}/compact"
    return Call("POST", path, parse_model(ThreadCompaction))


# --- schedules ------------------------------------------------------------------------------------
SCHEDULES_PATH = f"{AGENTS_PREFIX}/schedules"


class ScheduleChanges(TypedDict, total=False):
    """The fields of a schedule an update replaces: a field left out is kept, and None clears
    one of `metadata`, `config`, `starts_at`, `ends_at`, `max_credits_per_day` (the server
    refuses None for the others)."""

    prompt: str
    cron: str
    timezone: str
    agent_id: str
    thread: str
    metadata: Mapping[str, Any] | None
    config: Mapping[str, Any] | None
    starts_at: str | None
    ends_at: str | None
    paused: bool
    on_overlap: str
    on_missed: str
    max_credits_per_day: float | None


def schedule_body(
    *,
    prompt: str | None = None,
    cron: str | None = None,
    timezone: str | None = None,
    agent_id: str | None = None,
    thread: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    starts_at: str | None = None,
    ends_at: str | None = None,
    paused: bool | None = None,
    on_overlap: str | None = None,
    on_missed: str | None = None,
    max_credits_per_day: float | None = None,
) -> dict[str, Any]:
    """The fields given (None: left out)."""
    return compact(
        prompt=prompt,
        cron=cron,
        timezone=timezone,
        agent_id=agent_id,
        thread=thread,
        metadata=dict(metadata) if metadata is not None else None,
        config=dict(config) if config is not None else None,
        starts_at=starts_at,
        ends_at=ends_at,
        paused=paused,
        on_overlap=on_overlap,
        on_missed=on_missed,
        max_credits_per_day=max_credits_per_day,
    )


def create_schedule(body: Mapping[str, Any]) -> Call[Schedule]:
    return Call("POST", SCHEDULES_PATH, parse_model(Schedule), json=dict(body))


def list_schedules(limit: int | None = None, cursor: str | None = None) -> Call[SchedulePage]:
    params = compact(limit=limit, cursor=cursor)
    return Call("GET", SCHEDULES_PATH, parse_model(SchedulePage), params=params)


def get_schedule(schedule_id: str) -> Call[Schedule]:
    return Call("GET", f"{SCHEDULES_PATH}/{schedule_id}", parse_model(Schedule))


def update_schedule(schedule_id: str, changes: ScheduleChanges) -> Call[Schedule]:
    path = f"{SCHEDULES_PATH}/{schedule_id}"
    body = {
        name: dict(value) if isinstance(value, Mapping) else value
        for name, value in changes.items()
    }
    return Call("PUT", path, parse_model(Schedule), json=body)


def delete_schedule(schedule_id: str) -> Call[ScheduleDeleted]:
    return Call("DELETE", f"{SCHEDULES_PATH}/{schedule_id}", parse_model(ScheduleDeleted))


def pause_schedule(schedule_id: str) -> Call[Schedule]:
    return Call("POST", f"{SCHEDULES_PATH}/{schedule_id}/pause", parse_model(Schedule))


def resume_schedule(schedule_id: str) -> Call[Schedule]:
    return Call("POST", f"{SCHEDULES_PATH}/{schedule_id}/resume", parse_model(Schedule))


def next_firings(schedule_id: str, n: int | None = None) -> Call[ScheduleNextFirings]:
    path = f"{SCHEDULES_PATH}/{schedule_id}/next"
    return Call("GET", path, parse_model(ScheduleNextFirings), params=compact(n=n))


def trigger_schedule(schedule_id: str) -> Call[ScheduleFiring]:
    return Call("POST", f"{SCHEDULES_PATH}/{schedule_id}/trigger", parse_model(ScheduleFiring))


def schedule_firings(
    schedule_id: str,
    status: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[ScheduleFiringPage]:
    params = compact(status=status, limit=limit, cursor=cursor)
    path = f"{SCHEDULES_PATH}/{schedule_id}/firings"
    return Call("GET", path, parse_model(ScheduleFiringPage), params=params)


def schedule_usage(
    schedule_id: str, start_date: date | None = None, end_date: date | None = None
) -> Call[ScheduleUsage]:
    params = compact(
        start_date=start_date.isoformat() if start_date else None,
        end_date=end_date.isoformat() if end_date else None,
    )
    path = f"{SCHEDULES_PATH}/{schedule_id}/usage"
    return Call("GET", path, parse_model(ScheduleUsage), params=params)


# --- memory ---------------------------------------------------------------------------------------
MEMORY_PATH = "/v1/memory"


def namespace_text(namespace: str | Sequence[str]) -> str:
    """A namespace as the query string takes it: segments joined by '/'."""
    return namespace if isinstance(namespace, str) else "/".join(namespace)


def namespace_list(namespace: str | Sequence[str]) -> list[str]:
    """A namespace as a body takes it: its segments ('users/alice' is two)."""
    return (
        [part for part in namespace.split("/") if part]
        if isinstance(namespace, str)
        else list(namespace)
    )


def put_memory(
    namespace: str | Sequence[str],
    key: str,
    value: Any,
    text: str | None = None,
    ttl_seconds: int | None = None,
) -> Call[MemoryItem]:
    body = {"namespace": namespace_list(namespace), "key": key, "value": value}
    body.update(compact(text=text, ttl_seconds=ttl_seconds))
    return Call("PUT", f"{MEMORY_PATH}/items", parse_model(MemoryItem), json=body)


def get_memory(item_id: str) -> Call[MemoryItem]:
    return Call("GET", f"{MEMORY_PATH}/items/{item_id}", parse_model(MemoryItem))


def get_memory_by_key(namespace: str | Sequence[str], key: str) -> Call[MemoryItem]:
    params = {"namespace": namespace_text(namespace), "key": key}
    return Call("GET", f"{MEMORY_PATH}/items/by-key", parse_model(MemoryItem), params=params)


def list_memory(
    namespace_prefix: str | Sequence[str] | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Call[MemoryItemPage]:
    prefix = namespace_text(namespace_prefix) if namespace_prefix is not None else None
    params = compact(namespace_prefix=prefix, limit=limit, cursor=cursor)
    return Call("GET", f"{MEMORY_PATH}/items", parse_model(MemoryItemPage), params=params)


def search_memory(
    query: str,
    namespace_prefix: str | Sequence[str] | None = None,
    limit: int | None = None,
    filter: Mapping[str, Any] | None = None,
    mode: Literal["text", "semantic"] | None = None,
) -> Call[MemorySearchResult]:
    """`mode`: "text" (every word) or "semantic" (nearest in meaning; needs the server's
    embeddings model)."""
    body: dict[str, Any] = {"query": query, **compact(mode=mode)}
    if namespace_prefix is not None:
        body["namespace_prefix"] = namespace_list(namespace_prefix)
    body.update(compact(limit=limit, filter=dict(filter) if filter is not None else None))
    return Call("POST", f"{MEMORY_PATH}/search", parse_model(MemorySearchResult), json=body)


def delete_memory(item_id: str) -> Call[MemoryItemDeleted]:
    return Call("DELETE", f"{MEMORY_PATH}/items/{item_id}", parse_model(MemoryItemDeleted))


def memory_history(item_id: str) -> Call[MemoryHistory]:
    return Call("GET", f"{MEMORY_PATH}/items/{item_id}/history", parse_model(MemoryHistory))


# --- memory blocks --------------------------------------------------------------------------------
BLOCKS_PATH = f"{MEMORY_PATH}/blocks"


def create_block(label: str, value: str | None = None, limit: int | None = None) -> Call[Block]:
    body = {"label": label, **compact(value=value, limit=limit)}
    return Call("POST", BLOCKS_PATH, parse_model(Block), json=body)


def list_blocks(limit: int | None = None, cursor: str | None = None) -> Call[BlockPage]:
    params = compact(limit=limit, cursor=cursor)
    return Call("GET", BLOCKS_PATH, parse_model(BlockPage), params=params)


def get_block(label: str) -> Call[Block]:
    return Call("GET", f"{BLOCKS_PATH}/{label}", parse_model(Block))


def update_block(
    label: str,
    value: str | None = None,
    limit: int | None = None,
    if_version: int | None = None,
) -> Call[Block]:
    body = compact(value=value, limit=limit, if_version=if_version)
    return Call("PATCH", f"{BLOCKS_PATH}/{label}", parse_model(Block), json=body)


def delete_block(label: str) -> Call[BlockDeleted]:
    return Call("DELETE", f"{BLOCKS_PATH}/{label}", parse_model(BlockDeleted))


def block_history(
    label: str, limit: int | None = None, cursor: str | None = None
) -> Call[BlockHistory]:
    params = compact(limit=limit, cursor=cursor)
    return Call("GET", f"{BLOCKS_PATH}/{label}/history", parse_model(BlockHistory), params=params)


# --- evals ----------------------------------------------------------------------------------------
EVALS_PATH = f"{AGENTS_PREFIX}/evals"


def store_eval(body: Mapping[str, Any]) -> Call[Eval]:
    return Call("POST", EVALS_PATH, parse_model(Eval), json=dict(body))


def list_evals(limit: int | None = None, cursor: str | None = None) -> Call[EvalPage]:
    params = compact(limit=limit, cursor=cursor)
    return Call("GET", EVALS_PATH, parse_model(EvalPage), params=params)


def get_eval(eval_id: str) -> Call[Eval]:
    return Call("GET", f"{EVALS_PATH}/{eval_id}", parse_model(Eval))


def delete_eval(eval_id: str) -> Call[EvalDeleted]:
    return Call("DELETE", f"{EVALS_PATH}/{eval_id}", parse_model(EvalDeleted))
