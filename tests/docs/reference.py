"""docs/guide/reference.md, made from the app's own OpenAPI document (the one `/openapi.json`
serves): every operation by group with its parameters, body and answers, then every schema.

`python -m tests.docs.reference` rewrites the page (`make format` runs it);
tests/test_docs.py fails while the page is stale, so the reference never drifts from the API.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from atrium.app import create_app
from atrium.settings import Settings

PAGE = Path(__file__).parents[2] / "docs" / "guide" / "reference.md"
INTRO = """# API reference

Generated from the OpenAPI document the server publishes at `/openapi.json` (and shows at
`/docs`); `make format` regenerates it and the test suite fails while it is stale. Every group
takes `Authorization: Bearer <key>`; every error is `{"error": {"code", "message", "details"}}`
([Error](#error)); every response of a group carries `X-RateLimit-Limit`,
`X-RateLimit-Remaining` and `X-RateLimit-Reset`. The task guides show these in use.
"""
Schema = dict[str, Any]


def openapi() -> Schema:
    """The document of an app on default settings (building it opens no database)."""
    settings = Settings(
        _env_file=None, database_url="sqlite+aiosqlite:////nonexistent/atrium-reference.db"
    )
    document: Schema = create_app(settings).openapi()
    return document


def _anchor(name: str) -> str:
    return name.lower()


def type_of(schema: Schema) -> str:
    """A schema as a short type: `string`, `integer (≥ 1, ≤ 6)`, `list of [RunOut](#runout)`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{_anchor(name)})"
    for union in ("anyOf", "oneOf"):
        if union in schema:
            kinds = [type_of(part) for part in schema[union] if part.get("type") != "null"]
            nullable = any(part.get("type") == "null" for part in schema[union])
            return " or ".join(kinds) + (" or null" if nullable else "")
    if "enum" in schema:
        return "one of " + ", ".join(f"`{value}`" for value in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array":
        return "list of " + type_of(schema.get("items", {}))
    if kind == "object" and "additionalProperties" in schema:
        values = schema["additionalProperties"]
        return f"map of {type_of(values)}" if isinstance(values, dict) else "object"
    bounds = []
    for key, shown in (("minimum", "≥ {}"), ("maximum", "≤ {}"), ("minLength", "≥ {} chars")):
        if key in schema:
            bounds.append(shown.format(schema[key]))
    if "maxLength" in schema:
        bounds.append(f"≤ {schema['maxLength']} chars")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _fields(schema: Schema) -> list[str]:
    required = set(schema.get("required", []))
    rows = ["| field | type | required | description |", "|---|---|---|---|"]
    for name, field in schema.get("properties", {}).items():
        rows.append(
            f"| `{name}` | {_cell(type_of(field))} | {'yes' if name in required else ''} "
            f"| {_cell(field.get('description', ''))} |"
        )
    return rows


def _operation(method: str, path: str, operation: Schema) -> list[str]:
    lines = [f"### {method.upper()} `{path}`", "", operation.get("description", "").strip(), ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += ["| parameter | in | type | description |", "|---|---|---|---|"]
        for parameter in parameters:
            required = " (required)" if parameter.get("required") else ""
            schema = parameter.get("schema", {})
            lines.append(
                f"| `{parameter['name']}`{required} | {parameter['in']} "
                f"| {_cell(type_of(schema))} "
                f"| {_cell(parameter.get('description') or schema.get('description', ''))} |"
            )
        lines.append("")
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        lines.append(f"Body ({media}): {type_of(content.get('schema', {}))}")
        lines.append("")
    answers = []
    for status, response in sorted(operation.get("responses", {}).items()):
        schema = response.get("content", {}).get("application/json", {}).get("schema")
        shown = f" {type_of(schema)}" if schema and status.startswith("2") else ""
        answers.append(f"{status}{shown}")
    lines += ["Answers: " + "; ".join(answers) + ".", ""]
    named = _named_errors(operation)
    if named:
        lines += ["Errors of its own:", "", *named, ""]
    return lines


def _named_errors(operation: Schema) -> list[str]:
    """The errors a route names (`http.openapi.error_responses`): `- 409 `CONFLICT` Name: ...`."""
    found = []
    for status, response in sorted(operation.get("responses", {}).items()):
        for line in response.get("description", "").splitlines():
            if line.startswith("- `"):
                found.append(f"- {status} {line[2:]}")
    return found


def page(document: Schema) -> str:
    groups: dict[str, list[str]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            group = (operation.get("tags") or ["other"])[0]
            groups.setdefault(group, []).extend(_operation(method, path, operation))
    lines = [INTRO]
    for group, operations in groups.items():
        lines += [f"## {group[0].upper()}{group[1:]}", "", *operations]
    lines += ["## Schemas", ""]
    for name, schema in sorted(document["components"]["schemas"].items()):
        lines += [f"### {name}", "", schema.get("description", "").strip(), ""]
        if "properties" in schema:
            lines += [*_fields(schema), ""]
        else:
            lines += [f"Type: {type_of(schema)}", ""]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.rstrip() + "\n"


if __name__ == "__main__":
    made = page(openapi())
    if not PAGE.exists() or PAGE.read_text() != made:
        PAGE.write_text(made)
        print(f"{PAGE} rewritten", file=sys.stderr)
