"""The OpenAPI document describes what the API really sends.

FastAPI documents a 422 validation body that atrium never sends (validation errors are 400s:
docs/design.md#errors). Here every operation of an API group documents the one error body for
its error statuses, the Bearer scheme, and the `X-RateLimit-*` headers on every response; a
route names the errors of its own (`responses=error_responses(DomainNameTaken, ...)`) and
each is listed under its status, after what the group's description says of every route.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from atrium.errors import AppError
from atrium.http.groups import group_for
from atrium.phpshort.form_body import FIELD_VALUE_SCHEMA

_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "additionalProperties": False,
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "additionalProperties": False,
            "properties": {
                "code": {"type": "string", "examples": ["INVALID_PARAMETER"]},
                "message": {"type": "string"},
                "details": {
                    "type": "object",
                    "description": "Diagnostics; `parameter` names the offending parameter.",
                    "properties": {"parameter": {"type": "string"}},
                },
            },
        }
    },
}

_RATE_HEADERS: dict[str, Any] = {
    "X-RateLimit-Limit": {
        "required": True,
        "description": "Requests allowed in the window.",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Remaining": {
        "required": True,
        "description": "Requests left in the window.",
        "schema": {"type": "integer"},
    },
    "X-RateLimit-Reset": {
        "required": True,
        "description": "When the window resets, Unix epoch seconds.",
        "schema": {"type": "integer"},
    },
}

_GROUP_ERRORS = {
    "400": "Missing or invalid parameter (`INVALID_PARAMETER`, `details.parameter`).",
    "401": "Missing or invalid API key (`UNAUTHORIZED`).",
    "404": "Unknown id, another account's id, or unknown path (`NOT_FOUND`).",
    "429": "Rate limit exceeded (`RATE_LIMITED`); see `Retry-After`.",
}
# The gateway judges the body headers of every POST, PUT and PATCH before routing
# (docs/design.md#rate-limits).
_BODY_METHODS = frozenset({"post", "put", "patch"})
_BODY_ERRORS = {
    "413": "Request body larger than `ATRIUM_MAX_BODY_BYTES` (`PAYLOAD_TOO_LARGE`).",
    "415": "Content-Type the group does not take (`UNSUPPORTED_MEDIA_TYPE`).",
}


def _error_response(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _summary(error: type[AppError]) -> str:
    return " ".join((error.__doc__ or "").split("\n\n")[0].split())


def error_responses(*errors: type[AppError]) -> dict[int | str, dict[str, Any]]:
    """`responses=` of a route: the named errors it can return, each under its status as
    `` `CODE` Name: what it means `` (the class's docstring); the body is the one error body."""
    lines: dict[int, list[str]] = {}
    for error in errors:
        line = f"- `{error.code}` {error.__name__}: {_summary(error)}"
        lines.setdefault(error.status_code, []).append(line)
    return {
        status: {"description": "\n".join(found), "content": _error_response("")["content"]}
        for status, found in sorted(lines.items())
    }


def _without_null(parameter: dict[str, Any]) -> None:
    """`str | None` documents a parameter as `anyOf: [string, null]`, but a path, query or
    header value is text: null is sent by leaving the parameter out (and a generator that sends
    the text `null` gets a 400). The constraints stated beside the `anyOf` stay."""
    schema: dict[str, Any] = parameter.get("schema", {})
    variants = schema.get("anyOf")
    if not isinstance(variants, list) or {"type": "null"} not in variants:
        return
    kept = [variant for variant in variants if variant != {"type": "null"}]
    del schema["anyOf"]
    if len(kept) == 1:
        parameter["schema"] = {**kept[0], **schema}
    else:
        schema["anyOf"] = kept


_FORM_MEDIA_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _form_fields_without_null(operation: dict[str, Any]) -> None:
    """A form field is text: JSON's null has no form spelling (a generator would send the text
    `null`). The form media types of a body show its fields without their null variant."""
    content: dict[str, Any] = operation.get("requestBody", {}).get("content", {})
    for media_type in _FORM_MEDIA_TYPES:
        if media_type not in content:
            continue
        schema = copy.deepcopy(content[media_type]["schema"])
        for name, field in schema.get("properties", {}).items():
            holder = {"schema": field}
            _without_null(holder)
            holder["schema"].pop("default", None)
            schema["properties"][name] = holder["schema"]
        content[media_type]["schema"] = schema


def _body_required(operation: dict[str, Any]) -> None:
    """A body with required fields is itself required (no body: `name is required`)."""
    body: dict[str, Any] | None = operation.get("requestBody")
    if body is None:
        return
    schemas = [media.get("schema", {}) for media in body.get("content", {}).values()]
    if any(schema.get("required") for schema in schemas):
        body["required"] = True


def _form_group_body(operation: dict[str, Any]) -> None:
    """Fields of a phpShort-style body are text, numbers, booleans or null (`phpshort.form_body`):
    the other fields of a body are documented so too."""
    for media in operation.get("requestBody", {}).get("content", {}).values():
        schema = media.get("schema", {})
        if schema.get("type") == "object":
            schema.setdefault("additionalProperties", FIELD_VALUE_SCHEMA)


def _document_operation(operation: dict[str, Any], *, method: str, in_group: bool) -> None:
    for parameter in operation.get("parameters", []):
        _without_null(parameter)
    _form_fields_without_null(operation)
    _body_required(operation)
    responses: dict[str, Any] = operation.setdefault("responses", {})
    responses.pop("422", None)
    if not in_group:
        return
    errors = dict(_GROUP_ERRORS)
    if method in _BODY_METHODS:
        errors.update(_BODY_ERRORS)
    for status, description in errors.items():
        named = responses.get(status, {}).get("description")
        if named:
            description += "\n\n" + named
        responses[status] = {**responses.get(status, {}), **_error_response(description)}
    # An error an endpoint declares itself (409, ...) has the one error body too.
    for status, response in responses.items():
        if status[0] in "45" and not response.get("content"):
            response["content"] = _error_response("")["content"]
    responses["429"].setdefault("headers", {})["Retry-After"] = {
        "description": "Seconds until the window resets.",
        "schema": {"type": "integer"},
    }
    for response in responses.values():
        response.setdefault("headers", {}).update(_RATE_HEADERS)
    operation["security"] = [{"bearerAuth": []}]


def build_openapi(app: FastAPI) -> dict[str, Any]:
    schema = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
    )
    components: dict[str, Any] = schema.setdefault("components", {})
    schemas: dict[str, Any] = components.setdefault("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schemas["Error"] = _ERROR_SCHEMA
    components["securitySchemes"] = {
        "bearerAuth": {"type": "http", "scheme": "bearer", "description": "An `atr_…` API key."}
    }
    for path, item in schema.get("paths", {}).items():
        group = group_for(path)
        in_group = group is not None
        for method, operation in item.items():
            if isinstance(operation, dict) and "responses" in operation:
                _document_operation(operation, method=method, in_group=in_group)
                if group is not None and group.body == "form":
                    _form_group_body(operation)
    return schema


def install(app: FastAPI, *, amendments: Sequence[Callable[[dict[str, Any]], None]] = ()) -> None:
    """Serve `build_openapi`'s document, edited by `amendments`: what the features know of this
    deployment (which models its settings make usable)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build_openapi(app)
            for amend in amendments:
                amend(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
