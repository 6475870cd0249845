"""Schema fuzzing: schemathesis against the app's own OpenAPI document, every operation.

Each operation is its own test (per backend). Requests are authenticated with a real key and go
in-process to a real app on a real database, seeded through the API so that fuzzed path ids hit
real records half of the time. Every response must: not be a 5xx, match its documented status,
media type, headers and schema, and — for any error — be the one error body, with no trace.
"""

from __future__ import annotations

import base64
import secrets
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import available_timezones

import httpx
import pytest
import schemathesis
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from hypothesis import HealthCheck, seed, settings
from schemathesis import Case, CheckContext, Response
from schemathesis.checks import CHECKS as REGISTERED_CHECKS
from schemathesis.checks import load_all_checks
from schemathesis.core.failures import FailureGroup, as_reported_failure
from schemathesis.core.result import Err
from schemathesis.generation.hypothesis.builder import MissingPathParameters
from schemathesis.generation.hypothesis.reporting import ignore_hypothesis_output
from schemathesis.pytest.lazy import get_all_tests
from schemathesis.python import asgi as schemathesis_asgi
from schemathesis.specs.openapi.checks import (
    ignored_auth,
    negative_data_rejection,
    positive_data_acceptance,
)

from atrium.analytics.service import MAX_RANGE_DAYS
from atrium.app import create_app
from atrium.auth.service import create_key
from atrium.db.engine import Database
from atrium.errors import InvalidParameter
from atrium.schedules import cron
from atrium.settings import Settings
from tests.conftest import Databases, _empty_tables, bearer
from tests.dns_server import DNSServer
from tests.reliability.conftest import (
    OPENAPI_DOCUMENT,
    Seeded,
    error_problem,
    leak_problem,
    path_values,
    seed_account,
)
from tests.runs.helpers import create_run, wait_finished

MAX_EXAMPLES = 40
# The cases are derandomized: Hypothesis drew them from a digest of this test's source, which
# changes with every edit of the test. This is the digest of its source before both backends
# shared one test, so the same cases are still sent (each now to both backends).
CASES_SEED = int(
    "373823762084695823519030374029648791210053964465781461451005"
    "423448527276323023599687885548784584555146112925153050"
)

pytestmark = pytest.mark.usefixtures("frozen_heap")

schema = schemathesis.openapi.from_dict(OPENAPI_DOCUMENT)
# One test per operation, by its label (`GET /healthz`): xdist spreads them over its workers.
OPERATIONS = [result.ok().label for result in schema.get_all_operations()]


@dataclass
class FuzzTarget:
    backend: str
    app: FastAPI
    headers: dict[str, str]
    seeded: Seeded
    # The account's records with a run (and its artifact) in a thread of its own, for the bodies
    # that name a run: a fuzzed DELETE of the seeded thread takes the seeded run with it.
    kept: Seeded


async def _target(backend: str, database_url: str, quiet_dns: DNSServer) -> FuzzTarget:
    """An app on `database_url` with generous limits so fuzzing never sees 429, and an account
    seeded through the API."""
    await _empty_tables(database_url)
    config = Settings(
        _env_file=None,
        database_url=database_url,
        redis_url=None,
        redis_prefix=f"atrium-fuzz-{secrets.token_hex(4)}",
        rate_limit_standard="1000000/hour",
        rate_limit_anonymous="1000000/hour",
        webhook_max_endpoints_per_account=1_000_000,  # a quota is state, not schema
        # A deployment's bound under the schema's (1,000,000), as a quota is.
        memory_block_max_chars=1_000_000,
        memory_block_max_per_account=1_000_000,
        # MCP headers are secrets, which PostgreSQL deployments store only with a key.
        secrets_key=base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        dns_nameservers=[quiet_dns.address],  # a domain's verification asks only loopback
        # An upload's type is read from its bytes, which OpenAPI's `format: binary` cannot
        # state: any bytes are a file of some type, all allowed here.
        file_allowed_types=["application/octet-stream", "image/*", "text/*", "application/*"],
        # Search by meaning is in the schema; a deployment without an embedder refuses it.
        embeddings_model="offline",
    )
    db = Database(config)
    async with db.transaction() as session:
        issued = await create_key(session, account_name="fuzzer")
    await db.dispose()
    headers = bearer(issued.key)
    seeding_app = create_app(config)
    async with LifespanManager(seeding_app):
        transport = httpx.ASGITransport(app=seeding_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            seeded = await seed_account(client, headers, "fuzz")
            made = await create_run(client, headers, "kept run", agent_id=seeded.agent_id)
            done = await wait_finished(client, headers, made["run_id"])
    assert done["status"] == "completed", done
    kept = replace(seeded, run_id=done["run_id"], artifact_id=done["artifacts"][0]["artifact_id"])
    # schemathesis drives this app from its own event-loop thread and starts its lifespan there.
    return FuzzTarget(
        backend=backend, app=create_app(config), headers=headers, seeded=seeded, kept=kept
    )


@pytest.fixture(scope="module")
async def fuzz_targets(
    databases: Databases, quiet_dns: DNSServer
) -> AsyncIterator[list[FuzzTarget]]:
    """One app per backend for the whole module. Every generated case goes to each of them:
    generating a case cost about four times as much CPU as sending and checking it, so the
    backends share the generation (the cases are the same on both either way: derandomized)."""
    targets = [
        await _target(backend, await databases.url(backend), quiet_dns)
        for backend in databases.available()
    ]
    try:
        yield targets
    finally:
        schemathesis_asgi.shutdown_lifespans()


def _real_ids(case: Case, seeded: Seeded) -> None:
    """Half of the positive cases address a real record of the account instead of a random id
    (a negative case keeps its id: that id is what makes it negative)."""
    if not case.path_parameters or zlib.crc32(repr(case.path_parameters).encode()) % 2:
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    params = case.path_parameters
    for name, value in path_values(seeded, case.operation.path).items():
        if name in params:
            params[name] = value


def _real_versions(case: Case) -> None:
    """A positive alias body points at versions the agent has: its first (whether a version
    number exists, no schema can state)."""
    body = case.body
    if "/aliases/" not in case.operation.path or not isinstance(body, dict):
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if "version" in body:
        body["version"] = 1
    if isinstance(body.get("split"), dict) and "version" in body["split"]:
        body["split"]["version"] = 1


def _real_inputs(case: Case, seeded: Seeded) -> None:
    """A positive run's input parts name records of the account: a file part the seeded run's
    artifact, an image part (which needs an image, and the account has none) a URL. Whether a
    file exists, and is an image, no schema can state."""
    body = case.body
    if case.operation.path != "/api/v1/public/agent/runs" or not isinstance(body, dict):
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    for part in body.get("input") or []:
        if not isinstance(part, dict) or part.get("type") == "text":
            continue
        for name in ("file_id", "artifact_id", "url"):
            part.pop(name, None)
        if part.get("type") == "image":
            part["url"] = "https://images.example.test/seeded.png"
        else:
            part["artifact_id"] = seeded.artifact_id


def _real_fork_point(case: Case, seeded: Seeded) -> None:
    """A positive fork of the seeded thread forks at its run: whether a run is in a thread's
    history, no schema can state (a fork of a random thread id is a 404 whatever it names)."""
    body = case.body
    if not case.operation.path.endswith("/fork") or not isinstance(body, dict):
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if case.path_parameters.get("thread_id") == seeded.thread_id and body.get("at_run_id"):
        body["at_run_id"] = seeded.run_id


def _real_eval(case: Case, seeded: Seeded) -> None:
    """A positive eval names one of the account's finished runs on the agent it lists, once
    per case, under case ids that do not repeat: whether a run exists, is finished and is that
    agent's, no schema can state."""
    body = case.body
    if case.operation.path != "/v1/evals" or case.method.upper() != "POST":
        return
    if not isinstance(body, dict) or case.meta is None:
        return
    if not case.meta.generation.mode.is_positive or not isinstance(body.get("cases"), list):
        return
    body["agents"] = [seeded.agent_id]
    for index, item in enumerate(body["cases"]):
        if isinstance(item, dict) and isinstance(item.get("results"), list) and item["results"]:
            item["case_id"] = f"case-{index}"
            first = item["results"][0]
            if isinstance(first, dict):
                first.update(agent=seeded.agent_id, run_id=seeded.run_id)
                for check in first.get("checks") or []:
                    if isinstance(check, dict) and check.get("judge_run_id") is not None:
                        check["judge_run_id"] = seeded.run_id
            item["results"] = [first]


def one_error_body(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """Every 4xx/5xx is `{"error": {"code", "message", "details"}}`; nothing leaks a trace."""
    if response.status_code >= 400:
        problem = error_problem(
            response.status_code, response.content, response.headers.get("content-type", [""])[0]
        )
        assert problem is None, problem
    problem = leak_problem(response.content)
    assert problem is None, problem
    assert "x-request-id" in response.headers, "every response carries X-Request-ID"
    return None


def _negates_the_key(case: Case) -> bool:
    """Whether the case was made negative by dropping or mangling `Authorization`."""
    data = getattr(getattr(case.meta, "phase", None), "data", None)
    names = {getattr(data, "parameter", None)}
    names |= {getattr(m, "parameter", None) for m in getattr(data, "mutations", None) or []}
    return "authorization" in {str(name).lower() for name in names if name}


def negative_data_rejection_as_sent(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """`negative_data_rejection`, except for cases whose negation was the key: this harness
    always sends a valid key, so such a request goes out valid (with, at most, unknown query
    parameters, which every endpoint ignores by design) and a 2xx is right."""
    if _negates_the_key(case):
        return None
    result: bool | None = negative_data_rejection(ctx, response, case)
    return result


load_all_checks()


# Every check schemathesis has (positive data acceptance, unsupported methods and their `Allow`,
# missing required headers, ignored auth, ...), the negative-data one as sent.
def _is_taken(response: Response) -> bool:
    """The state of the account, which no schema can state, refused what the schema allows: a
    unique name already in use (phpShort's 400 `has already been taken`), or a provider's
    stored secret not sent again with a new base_url (an earlier example stored one)."""
    if response.status_code != 400:
        return False
    message: str = response.json()["error"]["message"]
    return message.endswith(("has already been taken", "when base_url changes"))


def positive_data_acceptance_but_taken(
    ctx: CheckContext, response: Response, case: Case
) -> bool | None:
    """`positive_data_acceptance`, except for a name that an earlier example took."""
    if _is_taken(response):
        return None
    result: bool | None = positive_data_acceptance(ctx, response, case)
    return result


REPLACED = {
    negative_data_rejection: negative_data_rejection_as_sent,
    positive_data_acceptance: positive_data_acceptance_but_taken,
}
CHECKS: list[Any] = [REPLACED.get(check, check) for check in REGISTERED_CHECKS.get_all()] + [
    one_error_body
]
# `ignored_auth` sends probes of its own: the operation without a key and with a made-up one.
# The gateway refuses both before any database query (`looks_like_key`; no key, no lookup), so
# on a second backend they would run the same code again: they go to the first backend only
# (they were about a third of the module's requests).
CHECKS_OF_LATER_BACKENDS: list[Any] = [check for check in CHECKS if check is not ignored_auth]


def _usable_range(case: Case) -> None:
    """A positive usage query asks for a range the server takes: OpenAPI cannot state a rule
    between two parameters (start_date on or before end_date, at most 366 days apart; the
    descriptions say it). Done here, as the coverage phase runs no hooks."""
    query = case.query
    usage = ("/v1/analytics/usage", "/v1/schedules/{schedule_id}/usage")
    if case.operation.path not in usage or not query or "start_date" not in query:
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    try:
        end = date.fromisoformat(query.get("end_date") or datetime.now(UTC).date().isoformat())
        start = date.fromisoformat(query["start_date"])
    except (ValueError, TypeError):
        return
    if not 0 <= (end - start).days < MAX_RANGE_DAYS:
        query["start_date"] = end.isoformat()


def _fitting_block(case: Case) -> None:
    """A positive block body's `value` fits its `limit` (a rule between two fields, or, for an
    update without a new value, the block's current text: none a schema can state)."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if not case.operation.path.startswith("/v1/memory/blocks") or not isinstance(case.body, dict):
        return
    body = case.body
    if case.method.upper() == "PATCH":
        body["value"] = body.get("value") if isinstance(body.get("value"), str) else ""
    value, limit = body.get("value", ""), body.get("limit", 2_000)
    if isinstance(value, str) and isinstance(limit, int) and len(value) > limit:
        body["limit"] = max(len(value), 1)


def _consistent_tools(case: Case) -> None:
    """A positive agent config names each tool once, and its MCP tool asks approval for, and
    declares idempotent, only tools it allows: rules between entries and fields that OpenAPI
    cannot state (docs/guide/tools.md says them)."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    body = case.body if isinstance(case.body, dict) else {}
    config = body.get("config")
    tools = config.get("tools") if isinstance(config, dict) else None
    if not isinstance(tools, list):
        return
    named: dict[object, object] = {}
    for tool in tools:
        if isinstance(tool, dict):
            name = tool.get("server_label") if tool.get("type") == "mcp" else tool.get("name")
        else:
            name = tool
        named.setdefault(name if isinstance(name, str) else id(tool), tool)
    tools[:] = list(named.values())
    for tool in tools:
        allowed = tool.get("allowed_tools") if isinstance(tool, dict) else None
        approval = tool.get("require_approval") if isinstance(tool, dict) else None
        if isinstance(allowed, list) and isinstance(approval, dict):
            approval["always"] = [name for name in approval.get("always", []) if name in allowed]
        idempotent = tool.get("idempotent") if isinstance(tool, dict) else None
        if isinstance(allowed, list) and isinstance(idempotent, list):
            idempotent[:] = [name for name in idempotent if name in allowed]


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    return value


def _storable_output_schema(case: Case) -> None:
    """A positive agent config's `output_schema`, and each function tool's `parameters` (checked
    like it: docs/guide/tools.md), hold no NUL: the schemas are free-form JSON, so OpenAPI cannot
    state it (the server refuses NUL anywhere, as PostgreSQL text cannot hold it)."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    config = case.body.get("config") if isinstance(case.body, dict) else None
    if not isinstance(config, dict):
        return
    if "output_schema" in config:
        config["output_schema"] = _without_nul(config["output_schema"])
    tools = config.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and tool.get("type") == "function" and "parameters" in tool:
            tool["parameters"] = _without_nul(tool["parameters"])


@dataclass
class Sender:
    """A target and the one in-process HTTP session its cases of an operation go through."""

    target: FuzzTarget
    session: schemathesis_asgi.ASGIClient


def _usable_schedule(case: Case) -> None:
    """A positive schedule body names a cron expression and a zone that exist, a thread and an
    agent of the account (or none), and a window whose end follows its start: rules of cronsim,
    the zone database and the account's records that OpenAPI cannot state (the descriptions
    say them)."""
    body = case.body
    if not case.operation.path.startswith("/v1/schedules") or not isinstance(body, dict):
        return
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return
    if isinstance(body.get("cron"), str):
        try:
            cron.check(body["cron"])
        except InvalidParameter:
            body["cron"] = "0 9 * * *"
    if isinstance(body.get("timezone"), str) and body["timezone"] not in available_timezones():
        body["timezone"] = "UTC"
    if isinstance(body.get("thread"), str):
        body["thread"] = "new"
    if isinstance(body.get("agent_id"), str):
        body.pop("agent_id")
    starts, ends = body.get("starts_at"), body.get("ends_at")
    if isinstance(starts, str) and isinstance(ends, str):
        try:
            if datetime.fromisoformat(ends) <= datetime.fromisoformat(starts):
                body.pop("ends_at")
        except ValueError:
            return


@contextmanager
def _senders(targets: list[FuzzTarget], operation: str) -> Iterator[list[Sender]]:
    """A session per target for one operation's cases. Left to itself schemathesis builds a
    `requests` session (and its adapter and pool manager) for every request and merges the
    process's proxy settings and `~/.netrc` into each: neither means anything for an app
    reached in-process (`trust_env` off), and the session is made as schemathesis makes it
    (the operation's stream-event limit, the app's lifespan started on entering)."""
    [found] = schema.include(name=operation).get_all_operations()
    max_stream_events = schema.config.max_stream_events_for(operation=found.ok())
    with ExitStack() as stack:
        senders = []
        for target in targets:
            session = schemathesis_asgi.get_client(target.app, max_stream_events=max_stream_events)
            session.trust_env = False
            senders.append(Sender(target=target, session=stack.enter_context(session)))
        yield senders


def _send_to_each(case: Case, senders: list[Sender]) -> None:
    """The case sent to every target and checked, each time with the real ids of the target's
    own account (in place: schemathesis revalidates a case edited so)."""
    generated = dict(case.path_parameters)
    for index, sender in enumerate(senders):
        target = sender.target
        case.path_parameters.clear()
        case.path_parameters.update(generated)
        _real_ids(case, target.seeded)
        _real_fork_point(case, target.seeded)
        _real_inputs(case, target.kept)
        _real_eval(case, target.kept)
        _real_versions(case)
        # Checks that send requests of their own (`ignored_auth`'s probes without the key) pick
        # the schema's transport: the ASGI one, to this app.
        case.operation.schema.app = target.app
        try:
            case.call_and_validate(
                app=target.app,
                session=sender.session,
                headers=target.headers,
                checks=CHECKS if index == 0 else CHECKS_OF_LATER_BACKENDS,
            )
        except Exception as failure:
            failure.add_note(f"backend: {target.backend}")
            raise
        finally:
            # As a new session per request would: no cookie carries over to the next case.
            sender.session.cookies.clear()


@seed(CASES_SEED)
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def keeps_its_contract(case: Case, senders: list[Sender]) -> None:
    _usable_range(case)
    _consistent_tools(case)
    _storable_output_schema(case)
    _usable_schedule(case)
    _fitting_block(case)
    _send_to_each(case, senders)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_operation_keeps_its_contract(operation: str, fuzz_targets: list[FuzzTarget]) -> None:
    """The operation's Hypothesis test (its schema's examples, coverage-phase cases and
    `MAX_EXAMPLES` generated ones) is built here, when the test runs, as schemathesis's own lazy
    loader does (whose pytest wiring fails on pytest 9.2: `Function._nodeid`). With
    `schema.parametrize()` every operation's test and its coverage cases were built at
    collection (~5 s of CPU, calibration ~12 ms) in every xdist worker, also in those that ran
    none of them. Built either way from the same seed, the cases are the same."""
    operation_schema = schema.include(name=operation)
    # Each path's unsupported-method probes are sent once per module, with its first operation,
    # as when one schema built them all (in each xdist worker that runs an operation of it).
    operation_schema.coverage_unexpected_methods_seen = schema.coverage_unexpected_methods_seen
    [built] = get_all_tests(
        schema=operation_schema,
        test_func=keeps_its_contract,
        settings=None,
        given_kwargs=None,
    )
    if isinstance(built, Err):
        raise built.err()
    hypothesis_test = built.ok()[1]
    missing_path_parameters = MissingPathParameters.get(hypothesis_test)
    if missing_path_parameters is not None:
        raise missing_path_parameters
    try:
        # schemathesis's plugin hides Hypothesis's output too.
        with ignore_hypothesis_output(), _senders(fuzz_targets, operation) as senders:
            hypothesis_test(senders=senders)
    except FailureGroup as failures:  # reported as schemathesis's plugin reports them
        raise as_reported_failure(failures) from None
