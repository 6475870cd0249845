"""MCP tools' output schemas: atrium checks a tool's `structuredContent` against its tool's
`outputSchema` itself, with the validators it uses for output schemas (`kit.schema_validators`:
offline, linear-time regexes).

The MCP SDK's session would check it with `jsonschema` (Python's backtracking `re`, on the event
loop) and fastmcp's client again through a pydantic model of the schema (Python's `re` for any
pattern the Rust engine refuses): a hostile server's `^(a+)+$` held the whole process for
seconds. Both look the schema up in the session's `_tool_output_schemas`, and skip a tool whose
entry is None: `forget_in_session` sets every listed tool's entry so. That dict is private to
the SDK: should it go, the SDK lists the tools again on a call and checks them as before
(docs/decisions/0039-output-schemas-never-fetch-and-run-linear-regexes.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema_rs
from mcp import types as mcp_types

from atrium.kit.json_object import JsonObject
from atrium.kit.schema_validators import SchemaUnusable, build_validator, first_error


class InvalidToolOutput(Exception):
    """A tool's result misses its output schema, or that schema cannot be used."""


def forget_in_session(session: object, tools: Iterable[mcp_types.Tool]) -> None:
    """Leave the MCP clients no output schema to check `tools`' results against."""
    schemas = getattr(session, "_tool_output_schemas", None)
    if isinstance(schemas, dict):
        for tool in tools:
            schemas[tool.name] = None


class OutputChecks:
    """The output schemas of one server's tools, and the validators built from them (each on
    a tool's first result)."""

    def __init__(self) -> None:
        self._schemas: dict[str, JsonObject] = {}
        self._validators: dict[str, jsonschema_rs.Validator | str] = {}

    def learn(self, tools: Iterable[mcp_types.Tool]) -> None:
        self._schemas = {tool.name: tool.outputSchema for tool in tools if tool.outputSchema}
        self._validators = {}

    def check(self, name: str, structured: Any) -> None:
        """`InvalidToolOutput` when `structured` (a result's `structuredContent`) misses the
        output schema of the tool `name`; nothing for a tool without one."""
        schema = self._schemas.get(name)
        if schema is None:
            return
        if structured is None:
            raise InvalidToolOutput(
                f"tool {name} has an output schema but returned no structured content"
            )
        validator = self._validators.get(name)
        if validator is None:
            try:
                validator = build_validator(schema)
            except SchemaUnusable as exc:
                validator = f"tool {name} has an output schema atrium cannot use: {exc}"
            self._validators[name] = validator
        if isinstance(validator, str):
            raise InvalidToolOutput(validator)
        error = first_error(validator, structured)
        if error is not None:
            raise InvalidToolOutput(
                f"tool {name} returned structured content that misses its output schema: {error}"
            )
