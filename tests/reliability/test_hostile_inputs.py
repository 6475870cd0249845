"""Hostile inputs beyond the schema, sent to every operation of every group.

Injection strings, NUL bytes, lone surrogates, invalid UTF-8, huge and deep values go into every
path parameter, query parameter, declared header and body field (as JSON and as a form), and
malformed bodies and abusive headers go to every operation. Whatever comes back must not be a
5xx or a 403, every error must be the one error body, nothing may leak a trace, and the seeded
records must still be there afterwards.

Seeding an account (an agent run among its records) cost as much CPU as a tenth of a test, so
one account per backend is seeded for the whole module and the tests that only read (GET) share
it; a test that may change or delete records seeds an account of its own (its records and runs
are nobody else's), with a run only when its operation names one. The tables are therefore not
emptied between this module's tests (`keep_tables`): accounts keep them apart.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI

from atrium.auth.service import create_key
from atrium.db.engine import Database
from tests import apps
from tests.conftest import KeyFactory, bearer, build_settings
from tests.dns_server import DNSServer
from tests.reliability.conftest import (
    OPENAPI_DOCUMENT,
    Seeded,
    error_problem,
    leak_problem,
    path_values,
    resource_paths,
    seed_account,
)
from tests.runs.helpers import RUNS, wait_finished

# Text values: each goes into every parameter and body field.
HOSTILE_TEXT = [
    "'; DROP TABLE domains; --",
    "' OR '1'='1",
    '" OR ""="',
    "1; SELECT pg_sleep(5)",
    "\x00",
    "a\x00b",
    "\ud800",
    "\udfff\ud800",
    "../../../../etc/passwd",
    "<script>alert(1)</script>",
    "{{7*7}}${7*7}",
    "${jndi:ldap://127.0.0.1/a}",
    "\u202egnp.exe",
    "\ufeff",
    "e\u0301" * 300,
    "\U0001f600" * 200,
    "A" * 5000,
    "-1",
    "0",
    "99999999999999999999999999999",
    "1e309",
    "NaN",
    " ",
    "",
    "\r\nX-Injected: 1",
    "%",
    "%00",
    "\\",
    "null",
    "[]",
    "{}",
    "ｆｕｌｌｗｉｄｔｈ",
]
# JSON values of other types for body fields.
HOSTILE_JSON: list[Any] = [
    None,
    True,
    -1,
    2**80,
    1.5e308,
    [],
    ["a"],
    {},
    {"a": {"b": "\x00"}},
    {"\ud800": "\ud800"},
    float("nan"),
    float("inf"),
    {"a": float("nan")},
]
# Raw path segments: invalid UTF-8 and encoded separators that a URL library would not produce.
RAW_SEGMENTS = ["%ff%fe", "%c0%af", "%ED%A0%80", "%00", "..%2f..%2f", "%2e%2e", "a%0d%0ab"]
# Whole bodies that are not what any endpoint takes.
MALFORMED_BODIES: list[tuple[str, bytes]] = [
    ("application/json", b"{"),
    ("application/json", b"[1, 2]"),
    ("application/json", b'"text"'),
    ("application/json", b"\xff\xfe\x00"),
    ("application/json", b"[" * 100_000 + b"]" * 100_000),
    ("application/json", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
    ("application/json", b'{"prompt": NaN, "name": Infinity, "color": -Infinity}'),
    ("application/json", b'{"name": "x", "name": "y", "prompt": "p", "prompt": 1}'),
    ("application/json", b'{"\\ud800": 1, "\\udfff": {"\\u0000": []}}'),
    ("application/x-www-form-urlencoded", b"name=%ff%fe&index_page=%c0&color=%00"),
    ("application/x-www-form-urlencoded", b"&&&==&name&name=&=x"),
    ("multipart/form-data", b"--x\r\nbroken"),
    ("multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data\r\n\r\nv\r\n--x--"),
    (
        "multipart/form-data; boundary=x",
        b'--x\r\nContent-Disposition: form-data; name="name"; filename="a.txt"\r\n'
        b"Content-Type: text/plain\r\n\r\nfile\r\n--x--\r\n",
    ),
    ("text/plain", b"name=x"),
    ("application/xml", b"<?xml version='1.0'?><!DOCTYPE a [<!ENTITY x SYSTEM 'file:///'>]><a/>"),
    ("application/json; charset=utf-16", '{"name": "x"}'.encode("utf-16")),
]
_PARAM = re.compile(r"\{([^}]+)\}")


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path, item in OPENAPI_DOCUMENT["paths"].items():
        for method, operation in item.items():
            if path.startswith(("/v1/", "/api/v1/")):
                found.append((method.upper(), path, operation))
    return found


OPERATIONS = _operations()


def _real_path(path: str, seeded: Seeded) -> str:
    values = path_values(seeded, path)
    return _PARAM.sub(lambda match: values[match.group(1)], path)


def _body_fields(operation: dict[str, Any]) -> list[str]:
    content = operation.get("requestBody", {}).get("content", {})
    for media in content.values():
        schema = media.get("schema", {})
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            schema = OPENAPI_DOCUMENT["components"]["schemas"][name]
        return list(schema.get("properties", {}))
    return []


def _json_bytes(document: Any) -> bytes:
    # Lone surrogates travel as JSON escapes (`\ud800`), as a hostile client would send them.
    return json.dumps(document).encode()


class Judge:
    """Sends requests and collects every response that breaks the rules.

    Each request goes straight to the app's ASGI transport, not through the client's `send`
    (authentication, redirects, cookies and event hooks, none of them used here): over the
    ~5,500 requests a backend sends, that step cost about a tenth of the module's CPU."""

    def __init__(self, client: httpx.AsyncClient, app: FastAPI, headers: dict[str, str]) -> None:
        self.client = client
        self.transport = httpx.ASGITransport(app=app)
        self.headers = headers
        self.problems: list[str] = []
        self.sent = 0

    async def send(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        content_type: str | None = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> httpx.Response | None:
        raw: list[tuple[bytes, bytes]] = [
            (name.lower().encode(), value.encode()) for name, value in self.headers.items()
        ]
        if content_type is not None:
            raw.append((b"content-type", content_type.encode()))
        raw.extend(headers or [])
        request = self.client.build_request(method, url, content=content)
        # httpx would refuse bytes that are not latin-1 text; the ASGI app gets them as sent.
        request.headers = httpx.Headers(
            [(k, v) for k, v in request.headers.raw if k.lower() not in {k2 for k2, _ in raw}] + raw
        )
        self.sent += 1
        response = await self.transport.handle_async_request(request)
        await response.aread()
        self.judge(
            f"{method} {url[:120]!r} ct={content_type!r} body={content[:80]!r}"
            if content is not None
            else f"{method} {url[:120]!r}",
            response,
        )
        return response

    def judge(self, what: str, response: httpx.Response) -> None:
        status = response.status_code
        problem = None
        if status >= 500:
            problem = f"{status}: {response.text[:300]}"
        elif status == 403:
            problem = "403 (existence leak: another account's record must be a 404)"
        elif status >= 400 and not what.startswith("HEAD "):  # HEAD answers carry no body
            problem = error_problem(
                status, response.content, response.headers.get("content-type", "")
            )
        if problem is None:
            problem = leak_problem(response.content)
        if problem is None and "x-request-id" not in response.headers:
            problem = "no X-Request-ID"
        if problem is not None:
            self.problems.append(f"{what}\n    -> {problem}")


pytestmark = [pytest.mark.keep_tables, pytest.mark.usefixtures("frozen_heap")]
OVERRIDES: dict[str, object] = {
    "rate_limit_standard": "1000000/hour",
    "rate_limit_anonymous": "1000000/hour",
}


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return dict(OVERRIDES)


@pytest.fixture(scope="module")
async def shared_account(database_url: str, quiet_dns: DNSServer) -> AsyncIterator[Seeded]:
    """The account the reading tests share, seeded once per backend on empty tables, through
    the app those tests reuse (same settings)."""
    settings = build_settings(database_url, quiet_dns, OVERRIDES)
    await apps.prepare(database_url, settings)
    await apps.empty_tables(database_url)
    app = await apps.running(settings)
    try:
        database: Database = app.state.db
        async with database.transaction() as session:
            issued = await create_key(session, account_name="hostile-readers", tier="standard")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            seeded = await seed_account(client, bearer(issued.key), "hostile")
    finally:
        await apps.release(app)
    yield seeded


async def _account_for(
    client: httpx.AsyncClient, make_key: KeyFactory, shared: Seeded, method: str, path: str
) -> Seeded:
    """The shared account for an operation that only reads; else an account of the test's own
    (a fresh tag: domain names are unique across accounts), with a run when the operation
    names one, or acts on an agent (every seeded agent used to have a run) or a thread."""
    if method == "GET":
        return shared
    key = await make_key()
    run = any(name in path for name in ("{run_id}", "{agent_id}", "{thread_id}"))
    return await seed_account(client, bearer(key.key), f"hostile-{secrets.token_hex(4)}", run=run)


@pytest.mark.parametrize(
    ("method", "path", "operation"),
    OPERATIONS,
    ids=[f"{method} {path}" for method, path, _ in OPERATIONS],
)
async def test_hostile_inputs_never_break_an_operation(
    client: httpx.AsyncClient,
    app: FastAPI,
    make_key: KeyFactory,
    shared_account: Seeded,
    method: str,
    path: str,
    operation: dict[str, Any],
) -> None:
    seeded = await _account_for(client, make_key, shared_account, method, path)
    auth = seeded.headers
    judge = Judge(client, app, auth)
    real = _real_path(path, seeded)
    parameters = operation.get("parameters", [])

    # Path parameters: every hostile text (percent-encoded) and raw invalid segments.
    for name in _PARAM.findall(path):
        for value in HOSTILE_TEXT:
            encoded = quote(value.encode("utf-8", "surrogatepass"), safe="")
            url = real.replace(_real_path("{" + name + "}", seeded), encoded, 1)
            await judge.send(method, url)
        for segment in RAW_SEGMENTS:
            url = real.replace(_real_path("{" + name + "}", seeded), segment, 1)
            await judge.send(method, url)

    # Query parameters (declared ones, and one nobody declared), repeated and raw.
    names = [p["name"] for p in parameters if p["in"] == "query"] + ["undeclared"]
    for name in names:
        for value in HOSTILE_TEXT:
            encoded = quote(value.encode("utf-8", "surrogatepass"), safe="")
            await judge.send(method, f"{real}?{name}={encoded}")
        await judge.send(method, f"{real}?{name}=%ff%fe&{name}=1&{name}")

    # Declared headers: every hostile text that a header can carry (bytes, no CR/LF).
    for name in [p["name"] for p in parameters if p["in"] == "header"]:
        for value in HOSTILE_TEXT:
            raw = value.encode("utf-8", "surrogatepass").replace(b"\r\n", b" ")[:4000]
            await judge.send(method, real, headers=[(name.lower().encode(), raw)])

    # Body fields, as JSON and as a form, with every hostile text and JSON value.
    if method in {"POST", "PUT", "PATCH"}:
        fields = _body_fields(operation)
        base: dict[str, Any] = {"name": "base", "prompt": "p"} if method == "POST" else {}
        for field in fields:
            for value in [*HOSTILE_TEXT, *HOSTILE_JSON]:
                document = {**base, field: value}
                await judge.send(
                    method, real, content=_json_bytes(document), content_type="application/json"
                )
            if "application/x-www-form-urlencoded" in operation["requestBody"]["content"]:
                for value in HOSTILE_TEXT:
                    form = f"{field}=" + quote(value.encode("utf-8", "surrogatepass"), safe="")
                    await judge.send(
                        method,
                        real,
                        content=form.encode(),
                        content_type="application/x-www-form-urlencoded",
                    )
        for content_type, body in MALFORMED_BODIES:
            await judge.send(method, real, content=body, content_type=content_type)

    # Header abuse on the operation itself.
    abuse: list[list[tuple[bytes, bytes]]] = [
        [(b"authorization", b"Bearer " + "atr_é".encode() * 30)],
        [(b"authorization", b"Bearer atr_\x00\x01\x02aaaaaaaaaaaaaaa")],
        [(b"authorization", b"Bearer " + b"atr_" + b"x" * 8000)],
        [(b"authorization", b"bearer  " + auth["Authorization"][7:].encode() + b"  ")],
        [(b"x-request-id", b"\xff\xfe<script>"), (b"x-request-id", b"second")],
        [(b"host", b"evil.example.com\r\nx: y")],
        [(b"host", b"")],
        [(b"accept", b"text/event-stream, application/json;q=\xff")],
        [(b"content-type", b"application/json; charset=\xff")],
        [(b"x-forwarded-for", b"' OR 1=1 --, \x00")],
        [(b"last-event-id", b"-1")],
        [(b"idempotency-key", b"\xff" * 300)],
        [(b"x-pad", b"p" * 16_000)],
    ]
    for extra in abuse:
        replaced = {name for name, _ in extra}
        judge.headers = {k: v for k, v in auth.items() if k.lower().encode() not in replaced}
        await judge.send(method, real, headers=extra)
    judge.headers = auth

    assert not judge.problems, f"{len(judge.problems)} of {judge.sent} requests:\n" + "\n".join(
        judge.problems[:25]
    )
    # Nothing was dropped or corrupted by what was sent (unless this operation deletes it).
    for name, record_path in resource_paths(seeded).items():
        response = await client.get(record_path, headers=auth)
        if method == "DELETE" and (
            record_path == real
            or record_path.startswith(real + "/")
            # A deleted thread takes its runs with it.
            or ("/threads/" in real and record_path.startswith(RUNS))
        ):
            continue
        assert response.status_code == 200, (name, response.status_code, response.text[:200])
    listing = await client.get("/api/v1/domains", headers=bearer(auth["Authorization"][7:]))
    assert listing.status_code == 200
    # Every run the hostile requests created runs to its end: none is stranded.
    runs = (await client.get(RUNS, params={"limit": "100"}, headers=auth)).json()["data"]
    for run in runs:
        done = await wait_finished(client, auth, run["run_id"], within=30)
        assert done["status"] in {"completed", "cancelled"}, done


OUTSIDE_PATHS = [
    "/",
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
    "/docs/assets/swagger-ui-bundle.js",
    "/docs/assets/index.html",
    "/docs/assets/%2e%2e%2f%2e%2e%2f__init__.py",
    "/dashboard",
    "/dashboard/",
    "/dashboard/%2e%2e/%2e%2e/etc/passwd",
    "/dashboard/js/..%2f..%2fpyproject.toml",
    "/dashboard/js/%ff%fe",
    "/dashboard/" + "a" * 5000,
    "/%ff",
    "/%00",
    "/nope",
    "/api",
    "/api/v1",
    "/api/v1/public",
    "/v1",
]


async def test_hostile_requests_outside_the_groups(client: httpx.AsyncClient, app: FastAPI) -> None:
    """Health, metrics, docs, the dashboard and unknown paths, with every method and hostile
    Host headers (served domains look the Host up in the database)."""
    judge = Judge(client, app, {})
    for path in OUTSIDE_PATHS:
        for method in ("GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE", "PATCH"):
            await judge.send(method, path)
    hosts = [
        b"a\x00b.example.com",
        b"x" * 300 + b".com",
        b"[::1]:99999",
        b"EXAMPLE.COM.",
        b"\xff.com",
    ]
    for host in hosts:
        await judge.send("GET", "/", headers=[(b"host", host)])
        await judge.send("GET", "/api/v1/domains", headers=[(b"host", host)])
    assert not judge.problems, "\n".join(judge.problems[:25])
