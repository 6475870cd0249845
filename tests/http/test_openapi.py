"""The OpenAPI document describes the real error body, auth and rate-limit headers."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import httpx

import atrium
from atrium.errors import AppError
from atrium.http.groups import group_for


async def test_openapi_documents_errors_and_rate_headers(client: httpx.AsyncClient) -> None:
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
    grouped = 0
    for path, item in document["paths"].items():
        for operation in item.values():
            responses = operation["responses"]
            assert "422" not in responses, path
            if group_for(path) is None:
                continue
            grouped += 1
            assert operation["security"] == [{"bearerAuth": []}]
            for status in ("400", "401", "404", "429"):
                ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/Error"
            for response in responses.values():
                assert set(response["headers"]) >= {
                    "X-RateLimit-Limit",
                    "X-RateLimit-Remaining",
                    "X-RateLimit-Reset",
                }
            assert "Retry-After" in responses["429"]["headers"]
    assert grouped >= 10


def _parameter(document: dict[str, Any], path: str, method: str, name: str) -> dict[str, Any]:
    parameters = document["paths"][path][method]["parameters"]
    found: dict[str, Any] = next(p["schema"] for p in parameters if p["name"] == name)
    return found


async def test_openapi_states_what_the_server_enforces(client: httpx.AsyncClient) -> None:
    """Generated clients and fuzzers trust the document: the values it allows are
    the ones the server takes."""
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    for path, item in document["paths"].items():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                assert {"type": "null"} not in parameter["schema"].get("anyOf", []), (
                    path,
                    parameter,
                )
    domains, runs = "/api/v1/domains", "/api/v1/public/agent/runs"
    assert _parameter(document, domains, "get", "per_page") == {
        "type": "integer",
        "enum": [10, 25, 50, 100],
        "description": "Page size: 10, 25, 50 (default) or 100.",
        "title": "Per Page",
    }
    assert _parameter(document, domains, "get", "page")["minimum"] == 1
    assert _parameter(document, domains + "/{id}", "get", "id")["type"] == "integer"
    assert _parameter(document, "/v1/analytics/usage", "get", "start_date")["format"] == "date"
    assert _parameter(document, runs + "/{run_id}/events", "get", "Last-Event-ID")["type"] == (
        "integer"
    )
    assert "pattern" in _parameter(document, runs, "get", "cursor")
    assert _parameter(document, runs, "get", "status")["enum"][0] == "queued"
    model = document["components"]["schemas"]["AgentConfigIn"]["properties"]["model"]
    assert model["pattern"] == "^(atrium:offline)$"  # no provider key in these settings


async def test_a_listed_cursor_matches_the_documented_pattern(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    pattern = _parameter(document, "/api/v1/public/agent/runs", "get", "cursor")["pattern"]
    for _ in range(2):
        created = await client.post(
            "/api/v1/public/agent/runs", json={"prompt": "hello"}, headers=auth
        )
        assert created.status_code == 201, created.text
    page = await client.get("/api/v1/public/agent/runs", params={"limit": 1}, headers=auth)
    cursor = page.json()["next_cursor"]
    assert re.fullmatch(pattern, cursor), cursor
    following = await client.get(
        "/api/v1/public/agent/runs", params={"limit": 1, "cursor": cursor}, headers=auth
    )
    assert following.status_code == 200 and following.json()["data"], following.text


def _schemas(node: object) -> list[dict[str, Any]]:
    """Every JSON Schema object in the document, nested ones too."""
    if isinstance(node, list):
        return [found for item in node for found in _schemas(item)]
    if not isinstance(node, dict):
        return []
    return [node] + [found for value in node.values() for found in _schemas(value)]


async def test_a_trimmed_field_states_no_raw_length(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """The server trims a form field before counting its length, so `maxLength` (which counts
    the raw value) cannot state the limit of a field whose pattern allows padding: a value
    padded past it is taken, and a fuzzer's "one too long" case was accepted (a flaky fuzz
    failure on `index_page`). Such a field bounds its length inside the pattern."""
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    padded = [
        schema
        for schema in _schemas(document)
        if str(schema.get("pattern", "")).startswith("^[\\t-\\r")
    ]
    assert len(padded) >= 3  # the domain's name and pages, and other trimmed text
    assert [schema for schema in padded if "maxLength" in schema] == []
    url = "https://example.org/" + "a" * (2048 - len("https://example.org/"))
    created = await client.post(
        "/api/v1/domains", data={"name": "padded.example", "index_page": f"  {url}  "}, headers=auth
    )
    assert created.status_code == 201, created.text
    assert created.json()["data"]["index_page"] == url


def _error_description(document: dict[str, Any], path: str, method: str, status: str) -> str:
    response = document["paths"][path][method]["responses"][status]
    assert response["content"]["application/json"]["schema"]["$ref"] == (
        "#/components/schemas/Error"
    )
    description: str = response["description"]
    return description


async def test_a_route_lists_its_named_errors(client: httpx.AsyncClient) -> None:
    """Each named error a route returns is listed under its status, with its wire code, after
    what every route of the group may answer."""
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    store = _error_description(document, "/api/v1/domains", "post", "400")
    assert store.startswith("Missing or invalid parameter (`INVALID_PARAMETER`")
    assert "- `INVALID_PARAMETER` DomainNameTaken: " in store
    delete = _error_description(document, "/api/v1/spaces/{id}", "delete", "404")
    assert "- `NOT_FOUND` SpaceNotFound: " in delete
    assert "DomainNameTaken" not in _error_description(document, "/api/v1/domains", "get", "400")


# The generic errors, and the client's (raised on the client's side of the wire).
_GENERIC_ERRORS = {"atrium.errors", "atrium.client.errors"}


def _named_errors() -> set[type[AppError]]:
    """Every error class of a feature's `errors` module."""
    found: set[type[AppError]] = set()
    for module in pkgutil.walk_packages(atrium.__path__, "atrium."):
        if module.name.endswith(".errors") and module.name not in _GENERIC_ERRORS:
            members = vars(importlib.import_module(module.name)).values()
            found |= {
                member
                for member in members
                if isinstance(member, type)
                and issubclass(member, AppError)
                and member.__module__ == module.name
            }
    return found


async def test_every_named_error_is_listed_by_a_route(client: httpx.AsyncClient) -> None:
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    listed = " ".join(
        response.get("description", "")
        for item in document["paths"].values()
        for operation in item.values()
        for response in operation["responses"].values()
    )
    named = _named_errors()
    assert len(named) >= 4
    missing = sorted(e.__name__ for e in named if f"`{e.code}` {e.__name__}:" not in listed)
    assert not missing, "named errors no route lists in responses="
