"""The client's records against the server's OpenAPI document
(docs/decisions/0045-client-contract.md).

The client mirrors the server's response schemas by hand (`client/records.py`); this holds the
two together, so a field added, removed or retyped on one side only fails here, naming the
client class and the field. Every call the client builds (`client/_calls.py`) is matched to its
operation in the app's own document, and the record it reads to the response component:

- the same field names (server fields the client leaves to `model_extra`, and client fields the
  server does not send, are listed below with their reason);
- the client accepts every body the schema allows: a field the server may leave out has a
  default, a nullable field takes None, every value the server may send parses (a `Literal`
  holds exactly the server's enum; plain `str` for an enum is open to new values on purpose);
- the client types no field looser than the server (a default for a field always sent, None
  where the server never sends null, `Any` or a bare `dict` for a typed value) unless `LOOSER`
  gives the reason;
- every object component those responses reach has a client record, or `UNTYPED` says why not.
"""

from __future__ import annotations

import inspect
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
from pydantic import BaseModel

from atrium.app import create_app
from atrium.client import _calls
from atrium.client._core import Call
from atrium.client.records import (
    Account,
    AccountInfo,
    Agent,
    AgentAlias,
    AgentConfig,
    AgentDeleted,
    AgentUsage,
    AgentVersion,
    AgentVersionDiff,
    AgentVersionPage,
    AliasDeleted,
    AliasSplit,
    Artifact,
    Billing,
    Block,
    BlockDeleted,
    BlockHistory,
    BlockPage,
    BlockSeen,
    BlockVersion,
    DailyUsage,
    Deleted,
    DeliveryPage,
    Domain,
    DomainVerification,
    Eval,
    EvalAgent,
    EvalAgentTotals,
    EvalCase,
    EvalCheck,
    EvalDataset,
    EvalDeleted,
    EvalPage,
    EvalResult,
    EvalSummary,
    File,
    FileDeleted,
    FilePage,
    KeyInfo,
    MemoryHistory,
    MemoryHistoryEntry,
    MemoryItem,
    MemoryItemDeleted,
    MemoryItemPage,
    MemorySearchResult,
    Page,
    PageLinks,
    PageMeta,
    PatchOperation,
    PendingToolCall,
    Provider,
    ProviderDeleted,
    ProviderList,
    RequiredAction,
    Run,
    RunError,
    RunEvent,
    RunPage,
    Schedule,
    ScheduleDeleted,
    ScheduleFiring,
    ScheduleFiringPage,
    ScheduleNextFiring,
    ScheduleNextFirings,
    SchedulePage,
    ScheduleUsage,
    Space,
    SummaryBilling,
    Thread,
    ThreadCompaction,
    ThreadCounts,
    ThreadDeleted,
    ThreadForkedFrom,
    ThreadLastRun,
    ThreadMessage,
    ThreadMessagePage,
    ThreadPage,
    ThreadToolCall,
    UsageCounters,
    UsageReport,
    VersionUsage,
    Webhook,
    WebhookDeleted,
    WebhookDelivery,
)
from atrium.settings import Settings

Schema = dict[str, Any]
Record = type[BaseModel]

# Each client record and the server components it reads (more than one: the client has one
# record where the server has a shape per operation).
RECORDS: dict[Record, tuple[str, ...]] = {
    Account: ("WhoAmI",),
    AccountInfo: ("AccountOut",),
    KeyInfo: ("KeyOut",),
    Domain: ("DomainOut",),
    DomainVerification: ("DomainVerification",),
    Space: ("SpaceOut",),
    Page[Domain]: ("DomainPage",),
    Page[Space]: ("SpacePage",),
    PageLinks: ("PageLinks",),
    PageMeta: ("PageMeta",),
    Deleted: ("DomainDeleted", "SpaceDeleted"),
    AgentConfig: ("AgentConfigOut",),
    Agent: ("AgentOut",),
    AgentDeleted: ("AgentDeleted",),
    AgentVersion: ("AgentVersionOut",),
    AgentVersionPage: ("AgentVersionList",),
    PatchOperation: ("PatchOperation",),
    AgentVersionDiff: ("AgentVersionDiff",),
    AliasSplit: ("SplitOut",),
    AgentAlias: ("AliasOut",),
    AliasDeleted: ("AliasDeleted",),
    VersionUsage: ("VersionUsageOut",),
    UsageCounters: ("UsageCounters",),
    DailyUsage: ("DailyUsage",),
    AgentUsage: ("AgentUsageOut",),
    UsageReport: ("UsageReport",),
    Billing: ("Billing",),
    RunError: ("RunError",),
    Artifact: ("ArtifactOut",),
    File: ("FileOut",),
    FilePage: ("FileList",),
    FileDeleted: ("FileDeleted",),
    Eval: ("EvalOut",),
    EvalPage: ("EvalList",),
    EvalSummary: ("EvalSummary",),
    EvalDeleted: ("EvalDeleted",),
    EvalDataset: ("EvalDataset",),
    EvalCheck: ("EvalCheck",),
    EvalAgent: ("EvalAgent",),
    EvalResult: ("EvalResult",),
    EvalCase: ("EvalCase",),
    EvalAgentTotals: ("EvalAgentTotals",),
    PendingToolCall: ("PendingToolCall",),
    RequiredAction: ("RequiredAction",),
    Run: ("RunOut",),
    BlockSeen: ("BlockSeen",),
    RunPage: ("RunList",),
    RunEvent: ("EventOut",),
    Webhook: ("WebhookOut", "WebhookCreated"),
    WebhookDeleted: ("WebhookDeleted",),
    WebhookDelivery: ("DeliveryOut",),
    DeliveryPage: ("DeliveryList",),
    Provider: ("ProviderOut",),
    ProviderList: ("ProviderList",),
    ProviderDeleted: ("ProviderDeleted",),
    Thread: ("ThreadOut",),
    ThreadPage: ("ThreadList",),
    ThreadLastRun: ("LastRun",),
    ThreadCounts: ("ThreadCounts",),
    ThreadForkedFrom: ("ForkedFrom",),
    ThreadMessage: ("ThreadMessage",),
    ThreadMessagePage: ("ThreadMessageList",),
    ThreadToolCall: ("ToolCallOut",),
    ThreadDeleted: ("ThreadDeleted",),
    ThreadCompaction: ("ThreadCompaction",),
    SummaryBilling: ("SummaryBilling",),
    Schedule: ("ScheduleOut",),
    SchedulePage: ("ScheduleList",),
    ScheduleDeleted: ("ScheduleDeleted",),
    ScheduleNextFiring: ("NextFiring",),
    ScheduleNextFirings: ("NextFirings",),
    ScheduleFiring: ("FiringOut",),
    ScheduleFiringPage: ("FiringList",),
    ScheduleUsage: ("ScheduleUsage",),
    MemoryItem: ("MemoryItemOut",),
    MemoryItemPage: ("MemoryItemList",),
    MemorySearchResult: ("MemorySearchResult",),
    MemoryItemDeleted: ("MemoryItemDeleted",),
    MemoryHistoryEntry: ("MemoryHistoryEntry",),
    MemoryHistory: ("MemoryHistory",),
    Block: ("BlockOut",),
    BlockPage: ("BlockList",),
    BlockDeleted: ("BlockDeleted",),
    BlockVersion: ("BlockVersionOut",),
    BlockHistory: ("BlockHistory",),
}

# Server fields no client record has (they stay in `model_extra`): (component, field).
NOT_MIRRORED: dict[tuple[str, str], str] = {
    ("DomainPage", "status"): "phpShort's constant 200, the HTTP status says it",
    ("SpacePage", "status"): "phpShort's constant 200, the HTTP status says it",
    ("DomainDeleted", "status"): "phpShort's constant 200, the HTTP status says it",
    ("SpaceDeleted", "status"): "phpShort's constant 200, the HTTP status says it",
    ("PageMeta", "links"): "Laravel's page-number links for HTML pagers; `Page` pages by number",
}

# Client fields the server's component does not have: (client class, field).
CLIENT_ONLY: dict[tuple[str, str], str] = {
    ("RunEvent", "run_id"): "`parse_event` lifts it from the event's `data`",
    ("RunEvent", "created_at"): "`parse_event` lifts it from the event's `data`",
}

# The document says the server may leave these out, yet every answer carries them (a default
# without `json_schema_serialization_defaults_required`); the client requires them.
SERVER_DOC_GAPS: dict[tuple[str, str], str] = {}

# Client fields typed looser than the server's: (class that declares the field, field).
_OLDER_SERVER = "a default for servers from before the field"
LOOSER: dict[tuple[str, str], str] = {
    ("Domain", "verified"): _OLDER_SERVER,
    ("Domain", "verification"): _OLDER_SERVER,
    ("UsageCounters", "requires_action"): _OLDER_SERVER,
    ("Run", "prompt"): _OLDER_SERVER,
    ("Run", "model"): _OLDER_SERVER,
    ("Agent", "version"): _OLDER_SERVER,
    ("PageLinks", "first"): "Laravel's paginator; atrium's always sends a URL",
    ("PageLinks", "last"): "Laravel's paginator; atrium's always sends a URL",
    ("PageMeta", "path"): "Laravel's paginator; atrium's always sends the list's URL",
    ("AgentConfig", "instructions"): "an empty default reads the same as the server's",
    ("AgentConfig", "tools"): "MCP servers and functions as plain objects, names as text",
    ("AgentConfig", "memory"): "memory tools' settings as a plain object",
    ("Run", "metadata"): "an empty default reads the same as the server's",
    ("RequiredAction", "type"): "the one kind of action there is",
    ("Provider", "headers"): "an empty default reads the same as the server's",
    ("ProviderList", "server_providers"): "an empty default reads the same as the server's",
}

# Object components reached from the client's responses that no record mirrors.
UNTYPED: dict[str, str] = {
    "McpServerTool": "`AgentConfig.tools` keeps tools as plain objects",
    "FunctionTool": "`AgentConfig.tools` keeps tools as plain objects",
    "MemoryConfigDocument": "`AgentConfig.memory` is kept as a plain object",
}


@dataclass(frozen=True)
class Reads:
    """What a call reads: its record, under `key` of the body when not the body itself."""

    record: Record | None
    key: str | None = None


# Every call of `_calls`, built with sample arguments, and what it reads.
CALLS: dict[str, tuple[Call[Any], Reads]] = {
    "domains.list": (_calls.domains.list(), Reads(Page[Domain])),
    "domains.get": (_calls.domains.get(1), Reads(Domain, "data")),
    "domains.create": (_calls.domains.create(name="a.example"), Reads(Domain, "data")),
    "domains.update": (_calls.domains.update(1, index_page="x"), Reads(Domain, "data")),
    "domains.verify": (_calls.domains.verify(1), Reads(Domain, "data")),
    "domains.delete": (_calls.domains.delete(1), Reads(Deleted)),
    "spaces.list": (_calls.spaces.list(), Reads(Page[Space])),
    "spaces.get": (_calls.spaces.get(1), Reads(Space, "data")),
    "spaces.create": (_calls.spaces.create(name="a"), Reads(Space, "data")),
    "spaces.update": (_calls.spaces.update(1, color=2), Reads(Space, "data")),
    "spaces.delete": (_calls.spaces.delete(1), Reads(Deleted)),
    "get_account": (_calls.get_account(), Reads(Account)),
    "list_agents": (_calls.list_agents(), Reads(Agent, "data")),
    "create_agent": (_calls.create_agent("a"), Reads(Agent)),
    "get_agent": (_calls.get_agent("agt_1"), Reads(Agent)),
    "update_agent": (_calls.update_agent("agt_1", name="b"), Reads(Agent)),
    "delete_agent": (_calls.delete_agent("agt_1"), Reads(AgentDeleted)),
    "list_versions": (_calls.list_versions("agt_1"), Reads(AgentVersionPage)),
    "get_version": (_calls.get_version("agt_1", 1), Reads(AgentVersion)),
    "diff_versions": (_calls.diff_versions("agt_1", 2, 1), Reads(AgentVersionDiff)),
    "restore_version": (_calls.restore_version("agt_1", 1), Reads(AgentVersion)),
    "list_aliases": (_calls.list_aliases("agt_1"), Reads(AgentAlias, "data")),
    "get_alias": (_calls.get_alias("agt_1", "prod"), Reads(AgentAlias)),
    "put_alias": (_calls.put_alias("agt_1", "prod", 1), Reads(AgentAlias)),
    "delete_alias": (_calls.delete_alias("agt_1", "prod"), Reads(AliasDeleted)),
    "usage": (_calls.usage(), Reads(UsageReport)),
    "create_run": (_calls.create_run("hi"), Reads(Run)),
    "submit_actions": (_calls.submit_actions("run_1"), Reads(Run)),
    "get_run": (_calls.get_run("run_1"), Reads(Run)),
    "list_runs": (_calls.list_runs(), Reads(RunPage)),
    "cancel_run": (_calls.cancel_run("run_1"), Reads(Run)),
    "run_events": (_calls.run_events("run_1"), Reads(RunEvent, "data")),
    "list_artifacts": (_calls.list_artifacts("run_1"), Reads(Artifact, "data")),
    "artifact_content": (_calls.artifact_content("run_1", "art_1"), Reads(None)),
    "create_webhook": (_calls.create_webhook("https://a.example"), Reads(Webhook)),
    "list_webhooks": (_calls.list_webhooks(), Reads(Webhook, "data")),
    "get_webhook": (_calls.get_webhook("wh_1"), Reads(Webhook)),
    "delete_webhook": (_calls.delete_webhook("wh_1"), Reads(WebhookDeleted)),
    "webhook_deliveries": (_calls.webhook_deliveries(), Reads(WebhookDelivery, "data")),
    "webhook_delivery_page": (
        _calls.webhook_delivery_page("wh_1", None, None, None),
        Reads(DeliveryPage),
    ),
    "create_provider": (_calls.create_provider("p", "https://a.example/v1"), Reads(Provider)),
    "list_providers": (_calls.list_providers(), Reads(ProviderList)),
    "get_provider": (_calls.get_provider("p"), Reads(Provider)),
    "update_provider": (_calls.update_provider("p", name="q"), Reads(Provider)),
    "delete_provider": (_calls.delete_provider("p"), Reads(ProviderDeleted)),
    "create_thread": (_calls.create_thread({"a": 1}), Reads(Thread)),
    "list_threads": (_calls.list_threads(metadata={"a": "b"}), Reads(ThreadPage)),
    "get_thread": (_calls.get_thread("thr_1"), Reads(Thread)),
    "thread_messages": (_calls.thread_messages("thr_1"), Reads(ThreadMessagePage)),
    "fork_thread": (_calls.fork_thread("thr_1", "run_1"), Reads(Thread)),
    "delete_thread": (_calls.delete_thread("thr_1"), Reads(ThreadDeleted)),
    "compact_thread": (_calls.compact_thread("thr_1"), Reads(ThreadCompaction)),
    "upload_file": (
        _calls.upload_file("a.txt", io.BytesIO(b"a"), "text/plain"),
        Reads(File),
    ),
    "list_files": (_calls.list_files(), Reads(FilePage)),
    "get_file": (_calls.get_file("file_1"), Reads(File)),
    "delete_file": (_calls.delete_file("file_1"), Reads(FileDeleted)),
    "file_content": (_calls.file_content("file_1"), Reads(None)),
    "store_eval": (_calls.store_eval({"a": 1}), Reads(Eval)),
    "list_evals": (_calls.list_evals(), Reads(EvalPage)),
    "get_eval": (_calls.get_eval("eval_1"), Reads(Eval)),
    "delete_eval": (_calls.delete_eval("eval_1"), Reads(EvalDeleted)),
    "create_schedule": (
        _calls.create_schedule(_calls.schedule_body(prompt="hi", cron="0 9 * * *")),
        Reads(Schedule),
    ),
    "list_schedules": (_calls.list_schedules(), Reads(SchedulePage)),
    "get_schedule": (_calls.get_schedule("sch_1"), Reads(Schedule)),
    "update_schedule": (
        _calls.update_schedule("sch_1", _calls.schedule_body(paused=True)),
        Reads(Schedule),
    ),
    "delete_schedule": (_calls.delete_schedule("sch_1"), Reads(ScheduleDeleted)),
    "pause_schedule": (_calls.pause_schedule("sch_1"), Reads(Schedule)),
    "resume_schedule": (_calls.resume_schedule("sch_1"), Reads(Schedule)),
    "next_firings": (_calls.next_firings("sch_1", 3), Reads(ScheduleNextFirings)),
    "trigger_schedule": (_calls.trigger_schedule("sch_1"), Reads(ScheduleFiring)),
    "schedule_firings": (_calls.schedule_firings("sch_1"), Reads(ScheduleFiringPage)),
    "schedule_usage": (_calls.schedule_usage("sch_1"), Reads(ScheduleUsage)),
    "put_memory": (_calls.put_memory("users/alice", "k", {"a": 1}, "t", 60), Reads(MemoryItem)),
    "get_memory": (_calls.get_memory("mem_1"), Reads(MemoryItem)),
    "get_memory_by_key": (_calls.get_memory_by_key(["users"], "k"), Reads(MemoryItem)),
    "list_memory": (_calls.list_memory("users", 10, "c"), Reads(MemoryItemPage)),
    "search_memory": (
        _calls.search_memory("tea", "users", 5, {"a": 1}),
        Reads(MemorySearchResult),
    ),
    "delete_memory": (_calls.delete_memory("mem_1"), Reads(MemoryItemDeleted)),
    "memory_history": (_calls.memory_history("mem_1"), Reads(MemoryHistory)),
    "create_block": (_calls.create_block("persona", "hi", 100), Reads(Block)),
    "list_blocks": (_calls.list_blocks(10, "c"), Reads(BlockPage)),
    "get_block": (_calls.get_block("persona"), Reads(Block)),
    "update_block": (_calls.update_block("persona", "x", 50, 1), Reads(Block)),
    "delete_block": (_calls.delete_block("persona"), Reads(BlockDeleted)),
    "block_history": (_calls.block_history("persona", 5, "c"), Reads(BlockHistory)),
}


@cache
def _document() -> Schema:
    """The app's own document (what `/openapi.json` serves); building it opens no database."""
    settings = Settings(
        _env_file=None, database_url="sqlite+aiosqlite:////nonexistent/atrium-contract.db"
    )
    document: Schema = create_app(settings).openapi()
    return document


def _components() -> dict[str, Schema]:
    components: dict[str, Schema] = _document()["components"]["schemas"]
    return components


def _ref_name(schema: Schema) -> str | None:
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[1] if isinstance(ref, str) else None


# --- the calls and their operations ---------------------------------------------------------------
def _call_names() -> set[str]:
    """Every function and record method of `_calls` that builds a `Call`."""

    def builds_call(function: Any) -> bool:
        return str(inspect.signature(function).return_annotation).startswith("Call[")

    names = {
        name
        for name, function in inspect.getmembers(_calls, inspect.isfunction)
        if function.__module__ == _calls.__name__ and builds_call(function)
    }
    for prefix, calls in (("domains", _calls.domains), ("spaces", _calls.spaces)):
        names |= {
            f"{prefix}.{name}"
            for name, method in inspect.getmembers(type(calls), inspect.isfunction)
            if not name.startswith("_") and builds_call(method)
        }
    return names


def _operation(call: Call[Any]) -> tuple[str, Schema]:
    for template, item in _document()["paths"].items():
        pattern = "/".join(
            "[^/]+" if part.startswith("{") else re.escape(part) for part in template.split("/")
        )
        if re.fullmatch(pattern, call.path) and call.method.lower() in item:
            operation: Schema = item[call.method.lower()]
            return template, operation
    raise AssertionError(f"no operation {call.method} {call.path} in the server's document")


def _success_schema(operation: Schema) -> Schema | None:
    for status, response in operation["responses"].items():
        if status.startswith("2"):
            schema: Schema | None = (
                response.get("content", {}).get("application/json", {}).get("schema")
            )
            return schema
    return None


def test_every_call_of_the_client_is_listed() -> None:
    assert set(CALLS) == _call_names()


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_call_reads_the_record_of_its_response(name: str) -> None:
    call, reads = CALLS[name]
    template, operation = _operation(call)
    schema = _success_schema(operation)
    where = f"{name} ({call.method} {template})"
    if reads.record is None:
        assert schema is None, f"{where}: the server answers JSON; the client reads bytes"
        return
    assert schema is not None, f"{where}: the server documents no JSON answer"
    component = _ref_name(schema)
    assert component is not None, f"{where}: the answer is not a component: {schema}"
    if reads.key is not None:
        member = _components()[component]["properties"].get(reads.key, {})
        schema = member.get("items", member)
        component = _ref_name(schema)
        assert component is not None, f"{where}: `{reads.key}` of the answer is not a component"
    record = reads.record.__name__
    assert component in RECORDS[reads.record], (
        f"{where}: the server answers {component}; the client reads it as {record}, "
        f"which mirrors {', '.join(RECORDS[reads.record])}"
    )


def _reached(start: str) -> Iterator[str]:
    """The object components a response's records reach, through the fields clients read."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        yield name
        if name in UNTYPED:
            continue  # the client reads it as a plain object, whatever it holds
        for field, schema in _components()[name].get("properties", {}).items():
            if (name, field) not in NOT_MIRRORED:
                todo.extend(_refs(schema))


def _refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        name = _ref_name(schema)
        if name is not None and _components()[name].get("type") == "object":
            yield name
        for value in schema.values():
            yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


def test_every_component_the_client_reads_has_a_record() -> None:
    mirrored = {component for components in RECORDS.values() for component in components}
    reached = {
        component
        for _, reads in CALLS.values()
        if reads.record is not None
        for start in RECORDS[reads.record]
        for component in _reached(start)
    }
    missing = sorted(reached - mirrored - set(UNTYPED))
    assert not missing, f"server components without a client record: {missing}"
    assert not set(UNTYPED) & mirrored, "a component in UNTYPED has a record now"


# --- the records' fields --------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One field as a JSON Schema says it: may it be left out, and its value's schema."""

    required: bool
    schema: Schema


def _fields(schema: Schema) -> dict[str, Field]:
    required = set(schema.get("required", []))
    return {
        name: Field(name in required, field) for name, field in schema.get("properties", {}).items()
    }


def _variants(schema: Schema, defs: dict[str, Schema]) -> list[Schema]:
    """The alternatives of a value's schema, named enums resolved (records stay `$ref`s)."""
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return [v for part in schema[union] for v in _variants(part, defs)]
    name = _ref_name(schema)
    if name is not None and defs[name].get("type") != "object":
        return _variants(defs[name], defs)
    return [schema]


def _nullable(variants: list[Schema]) -> bool:
    return any(v.get("type") == "null" or _is_any(v) for v in variants)


def _is_any(schema: Schema) -> bool:
    return not {"type", "$ref", "enum", "const", "anyOf", "oneOf"} & set(schema)


def _enum(schema: Schema) -> set[Any] | None:
    if "const" in schema:
        return {schema["const"]}
    return set(schema["enum"]) if "enum" in schema else None


_CLIENT_DEFS: dict[str, Record] = {record.__name__: record for record in RECORDS}


@dataclass
class Verdict:
    problems: list[str]
    looser: bool = False


def _accepts(client: Schema, server: Schema, c_defs: Schema, s_defs: Schema) -> Verdict:
    """Does the client's value schema take every value of the server's, and how tightly?"""
    verdict = Verdict([])
    c_variants = [v for v in _variants(client, c_defs) if v.get("type") != "null"]
    s_variants = [v for v in _variants(server, s_defs) if v.get("type") != "null"]
    for s_variant in s_variants:
        matches = [_match(c, s_variant, c_defs, s_defs) for c in c_variants]
        exact = [m for m in matches if not m.problems and not m.looser]
        loose = [m for m in matches if not m.problems]
        if not exact and not loose:
            reasons = [p for m in matches for p in m.problems] or ["no variant"]
            verdict.problems.append(f"takes no {_shown(s_variant)} ({'; '.join(reasons)})")
        elif not exact:
            verdict.looser = True
    # A client alternative the server never sends is looser too.
    if len(c_variants) > len(s_variants):
        verdict.looser = True
    return verdict


def _shown(schema: Schema) -> str:
    name = _ref_name(schema)
    if name is not None:
        return name
    enum = _enum(schema)
    if enum is not None:
        return f"one of {sorted(enum)}"
    return str(schema.get("type", "any value"))


def _match(client: Schema, server: Schema, c_defs: Schema, s_defs: Schema) -> Verdict:
    if _is_any(client):
        return Verdict([], looser=not _is_any(server))
    if _is_any(server):
        return Verdict([f"the server's value is any JSON, the client's {_shown(client)}"])
    c_enum, s_enum = _enum(client), _enum(server)
    if c_enum is not None:
        if s_enum is None:
            return Verdict([f"the client's {_shown(client)} refuses other text"])
        if c_enum != s_enum:
            return Verdict([f"client {sorted(c_enum)} vs server {sorted(s_enum)}"])
        return Verdict([])
    c_ref, s_ref = _ref_name(client), _ref_name(server)
    c_type, s_type = client.get("type"), "object" if s_ref else server.get("type")
    if s_enum is not None:
        # Plain text for an enum: open to the values a newer server adds.
        return Verdict([] if c_type == "string" else [f"{c_type} for {_shown(server)}"])
    if c_ref is not None:
        if s_ref is None:
            return Verdict([f"record {c_ref} for {_shown(server)}"])
        mirrors = RECORDS[_CLIENT_DEFS[c_ref]]
        return Verdict([] if s_ref in mirrors else [f"{c_ref} mirrors {mirrors}, not {s_ref}"])
    if c_type == "object" and s_type == "object":
        c_values = client.get("additionalProperties", True)
        if s_ref is not None:
            # A plain object where the server has a record.
            return Verdict([], looser=True)
        s_values = server.get("additionalProperties", True)
        c_values = {} if c_values is True else c_values
        s_values = {} if s_values is True else s_values
        return _accepts(c_values, s_values, c_defs, s_defs)
    if c_type == "array" and s_type == "array":
        return _accepts(client.get("items", {}), server.get("items", {}), c_defs, s_defs)
    if c_type == s_type:
        return Verdict([])
    if c_type == "number" and s_type == "integer":
        return Verdict([], looser=True)
    return Verdict([f"{c_type} for {s_type}"])


def _declared_by(record: Record, field: str) -> str:
    """The class of the record's hierarchy that declares `field` (`LOOSER` names that one)."""
    for cls in record.__mro__:
        if field in inspect.get_annotations(cls):
            return cls.__name__
    for name, info in record.model_fields.items():
        if info.alias == field:
            return _declared_by(record, name)
    return record.__name__


def _contract(record: Record) -> tuple[list[str], set[tuple[str, str]]]:
    """What breaks the contract between `record` and its components, and its looser fields."""
    client_schema = record.model_json_schema(by_alias=True)
    c_defs: Schema = client_schema.get("$defs", {})
    components = RECORDS[record]
    s_defs = _components()
    server = {name: _fields(s_defs[name]) for name in components}
    client = _fields(client_schema)
    label = record.__name__
    problems: list[str] = []
    looser: set[tuple[str, str]] = set()

    names = {field for fields in server.values() for field in fields}
    for field in sorted(names - set(client)):
        missing_in = [c for c in components if field in server[c]]
        if not all((c, field) in NOT_MIRRORED for c in missing_in):
            problems.append(
                f"{label}.{field}: the server sends it ({', '.join(missing_in)}), "
                "the client's record has no such field"
            )
    for field in sorted(set(client) - names):
        if (label, field) not in CLIENT_ONLY:
            problems.append(
                f"{label}.{field}: the client's record has it, the server's "
                f"{', '.join(components)} does not"
            )

    for field in sorted(set(client) & names):
        mine = client[field]
        theirs = [(c, server[c].get(field)) for c in components]
        may_omit = any(
            f is None or (not f.required and (c, field) not in SERVER_DOC_GAPS) for c, f in theirs
        )
        sent = [(c, f) for c, f in theirs if f is not None]
        s_variants = [v for _, f in sent for v in _variants(f.schema, s_defs)]
        c_variants = _variants(mine.schema, c_defs)
        loose = False
        where = f"{label}.{field}"
        if may_omit and mine.required:
            problems.append(f"{where}: the server may leave it out, the client requires it")
        if _nullable(s_variants) and not _nullable(c_variants):
            problems.append(f"{where}: the server may send null, the client refuses it")
        # A None default on a nullable field reads like the null the server sends.
        none_for_null = mine.schema.get("default", ...) is None and _nullable(s_variants)
        if not may_omit and not mine.required and not none_for_null:
            loose = True
        if _nullable(c_variants) and not _nullable(s_variants) and not may_omit:
            loose = True
        for component, f in sent:
            verdict = _accepts(mine.schema, f.schema, c_defs, s_defs)
            problems.extend(f"{where}: {p} ({component})" for p in verdict.problems)
            loose = loose or verdict.looser
        if loose:
            looser.add((_declared_by(record, field), field))
    return problems, looser


@pytest.mark.parametrize("record", list(RECORDS), ids=lambda record: record.__name__)
def test_a_record_mirrors_its_server_schema(record: Record) -> None:
    problems, looser = _contract(record)
    unexplained = sorted(f"{cls}.{field}" for cls, field in looser - set(LOOSER))
    problems += [f"{name}: typed looser than the server's, not in LOOSER" for name in unexplained]
    assert not problems, "the client's records drifted from the server's:\n" + "\n".join(problems)


def test_the_exception_lists_are_all_needed() -> None:
    looser: set[tuple[str, str]] = set()
    for record in RECORDS:
        looser |= _contract(record)[1]
    assert not set(LOOSER) - looser, "typed as the server's now: remove from LOOSER"
    components = _components()
    for component, field in SERVER_DOC_GAPS:
        required = components[component].get("required", [])
        assert field not in required, f"{component}.{field} is required now: remove the gap"
    for component, field in NOT_MIRRORED:
        assert field in components[component]["properties"], f"{component}.{field} is gone"
