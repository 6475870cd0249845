"""JSON Schemas that callers give atrium: `config.output_schema` and function tools' `parameters`.

Each must be an object schema (`"type": "object"`), at most 64 KB as JSON and 64 levels deep
(`kit.json_depth`), valid against its meta-schema (the draft its `$schema` names; 2020-12 when
it names none), with only local `$ref`s (`#/…`, and so `$dynamicRef`s and `$recursiveRef`s:
atrium never fetches a schema) and none that recurse, which pydantic-ai's structured output
cannot express; an output schema's `$ref`s must point into `#/$defs`, and the validator that
checks each run's answers must build from it (`kit.schema_validators`: every reference resolved
within it, regexes the linear engine runs). A per-run `config` reuses `OutputSchema` as it is.
"""

from __future__ import annotations

import copy
import json
from typing import Annotated, Any, Final, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for
from pydantic import AfterValidator, WithJsonSchema

from atrium.kit.json_depth import TOO_DEEP, too_deep
from atrium.kit.schema_validators import SchemaUnusable, build_validator

MAX_SCHEMA_BYTES: Final = 65_536
NO_ARGUMENTS: Final = {"type": "object", "properties": {}}


_MISSING: Final = object()
# The keywords that name another schema by URI: each one outside the document is a fetch.
_REFERENCES: Final = ("$ref", "$dynamicRef", "$recursiveRef")


def pointed_at(root: dict[str, Any], ref: str) -> Any:
    """What the local `$ref` (`#/$defs/item`) names in `root`; KeyError when nothing."""
    node: Any = root
    for token in ref.removeprefix("#").split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, dict) and key in node:
            node = node[key]
        else:
            raise KeyError(ref)
    return node


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node[key] for key in _REFERENCES if isinstance(node.get(key), str)]
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def check_object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema when it is one atrium can use; ValueError saying what is wrong otherwise."""
    if too_deep(schema):  # before anything walks it recursively
        raise ValueError(TOO_DEEP)
    try:
        encoded = json.dumps(schema, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        size = len(encoded.encode())
    except (ValueError, UnicodeEncodeError):  # NaN/Infinity, lone surrogates
        raise ValueError("must be JSON with finite numbers and Unicode text") from None
    if size > MAX_SCHEMA_BYTES:
        raise ValueError(f"must be at most {MAX_SCHEMA_BYTES} bytes as JSON (it is {size})")
    if "\\u0000" in encoded:
        raise ValueError("must not contain NUL characters")
    if schema.get("type") != "object":
        raise ValueError('must be an object schema: {"type": "object", …}')
    draft = schema.get("$schema", _MISSING)
    known = isinstance(draft, str) and validator_for(schema, cast(Any, None)) is not None
    if draft is not _MISSING and not known:
        raise ValueError(
            "names an unknown $schema: use a JSON Schema draft's URI, such as "
            "https://json-schema.org/draft/2020-12/schema"
        )
    checker = validator_for(schema, default=Draft202012Validator)
    try:
        checker.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        raise ValueError(
            f"is not a valid JSON Schema: {exc.message}" + (f" (at /{where})" if where else "")
        ) from None
    for ref in _refs(schema):
        if not ref.startswith("#"):
            raise ValueError(
                f"may only use local $ref, $dynamicRef and $recursiveRef (#/…), not {ref[:200]!r}"
            )
        try:
            pointed_at(schema, ref)
        except KeyError:
            raise ValueError(f"has a $ref that points to nothing: {ref[:200]!r}") from None
    # pydantic-ai (1 s of imports) is loaded by the first schema checked, not by every process
    # that imports the agents' schemas: an API process without a worker may never need it.
    from pydantic_ai import StructuredDict
    from pydantic_ai.exceptions import UserError

    try:
        StructuredDict(copy.deepcopy(schema))
    except UserError as exc:  # a $ref that recurses
        raise ValueError(f"cannot be used for structured output: {exc}") from None
    except Exception as exc:  # a shape pydantic-ai cannot read
        raise ValueError(f"cannot be used for structured output ({type(exc).__name__})") from None
    return schema


def check_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`check_object_schema`, and the output tool every run builds from it can be built: pydantic
    resolves only the `$ref`s into `#/$defs`; any other (`#`, `#/definitions/…`,
    `#/properties/…`) would fail each run of the agent instead of this request. (A function
    tool's `parameters` go to the model as written, so they may use them.)"""
    check_object_schema(schema)
    try:
        build_validator(schema)
    except SchemaUnusable as exc:
        raise ValueError(f"cannot be used to check answers: {exc}") from None
    from pydantic import TypeAdapter
    from pydantic_ai import StructuredDict

    try:
        TypeAdapter(StructuredDict(copy.deepcopy(schema))).json_schema()
    except KeyError as exc:
        raise ValueError(
            f"cannot be used for structured output: $ref {str(exc.args[0])[:200]!r} must point "
            "into #/$defs (put the shared schema there)"
        ) from None
    except Exception as exc:
        raise ValueError(f"cannot be used for structured output ({type(exc).__name__})") from None
    return schema


# What the OpenAPI document shows: an object schema of typed properties, other keywords allowed
# (the server takes any object schema `check_object_schema` passes, and JSON Schema ignores
# keywords it does not know; a whole meta-schema is no template a generator can fill).
DOCUMENTED_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": 'A JSON Schema of `"type": "object"` (docs/guide/structured-output.md).',
    "required": ["type"],
    "properties": {
        "type": {"const": "object"},
        "properties": {
            "type": "object",
            "propertyNames": {"pattern": r"^[^\x00]*$"},
            "additionalProperties": {
                "anyOf": [
                    {"type": "boolean"},  # `true` and `false` are schemas too
                    {
                        "type": "object",
                        "properties": {
                            "type": {"enum": ["string", "integer", "number", "boolean"]},
                            "description": {"type": "string", "pattern": r"^[^\x00]*$"},
                        },
                    },
                ]
            },
        },
    },
}
OutputSchema = Annotated[
    dict[str, Any], AfterValidator(check_output_schema), WithJsonSchema(DOCUMENTED_SCHEMA)
]
"""`config.output_schema`: the JSON Schema of a run's result."""
