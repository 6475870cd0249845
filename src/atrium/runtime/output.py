"""Structured output: with `config.output_schema`, a run's result is a JSON object valid against it.

pydantic-ai's `StructuredDict` gives the model the schema (as its output tool) but checks only
that the answer is an object; the type made here also validates it (`kit.schema_validators`:
no reference leaves the schema, regexes match in linear time), so an answer that misses the
schema goes back to the model as a retry prompt naming what is wrong, and after pydantic-ai's
output retries the run fails with OUTPUT_INVALID.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_ai import StructuredDict
from pydantic_core import CoreSchema, core_schema

from atrium.kit.json_object import JsonObject
from atrium.kit.schema_validators import SchemaUnusable, build_validator, first_error


class StructuredOutput:
    """The output type of one run, and the last way its answers missed the schema."""

    def __init__(self, schema: JsonObject) -> None:
        self.schema = schema
        self.last_error: str | None = None
        # A schema written before its references and regexes were checked at create: it fails
        # every answer (OUTPUT_INVALID, saying why) rather than fetching or backtracking.
        try:
            self._validator = build_validator(schema)
            self._unusable: str | None = None
        except SchemaUnusable as exc:
            self._unusable = f"the output schema cannot be used: {exc}"

    def _check(self, value: JsonObject) -> JsonObject:
        error = self._unusable or first_error(self._validator, value)
        if error is not None:
            self.last_error = error
            raise ValueError(f"the answer does not match the output schema: {self.last_error}")
        return value

    def output_type(self) -> type[JsonObject]:
        base: Any = StructuredDict(copy.deepcopy(self.schema))
        check = self._check

        class Checked(base):  # type: ignore[misc]
            @classmethod
            def __get_pydantic_core_schema__(
                cls, source: Any, handler: GetCoreSchemaHandler
            ) -> CoreSchema:
                return core_schema.no_info_after_validator_function(
                    check, base.__get_pydantic_core_schema__(source, handler)
                )

        return Checked
