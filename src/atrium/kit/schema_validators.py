"""Validators for JSON Schemas that come from outside: callers' output schemas, MCP servers'
tool output schemas.

Such a schema must neither reach the network nor freeze the process. `jsonschema` fetches a
`$ref` it cannot resolve (urllib, on the calling thread) unless given a registry, and matches
`pattern`, `patternProperties` (and the `additionalProperties` and `unevaluatedProperties`
that read them) with Python's backtracking `re`: `^(a+)+$` against 27 characters holds the
event loop for seconds. These validators are `jsonschema_rs`'s, built `offline` (a `$ref`
resolves within the schema or the bundled meta-schemas, else the build fails) with the Rust
`regex` engine, which matches in linear time and refuses lookaround and backreferences when the
validator is built (docs/decisions/0039-output-schemas-never-fetch-and-run-linear-regexes.md).
"""

from __future__ import annotations

from typing import Any, Final

import jsonschema_rs

from atrium.kit.json_object import JsonObject

_MAX_MESSAGE: Final = 500
_LINEAR_REGEXES: Final = jsonschema_rs.RegexOptions()


class SchemaUnusable(ValueError):
    """The schema cannot be validated against: what stops it, in a sentence."""


def build_validator(schema: JsonObject) -> jsonschema_rs.Validator:
    """A validator for `schema`, or `SchemaUnusable`: a `$ref` that does not resolve within it,
    a regex the linear engine cannot run, a schema its draft's meta-schema refuses. `format` is
    an annotation, as in `jsonschema` without a format checker."""
    try:
        return jsonschema_rs.validator_for(
            schema, offline=True, pattern_options=_LINEAR_REGEXES, validate_formats=False
        )
    except jsonschema_rs.ValidationError as exc:
        raise SchemaUnusable(_described(exc)) from None
    except (ValueError, TypeError) as exc:  # a schema that is no JSON: caught earlier by callers
        raise SchemaUnusable(str(exc)[:_MAX_MESSAGE]) from None


def first_error(validator: jsonschema_rs.Validator, instance: Any) -> str | None:
    """How `instance` misses the schema (the first way found, with where), or None if it fits."""
    for error in validator.iter_errors(instance):
        return _described(error)
    return None


def _described(error: jsonschema_rs.ValidationError) -> str:
    where = "/".join(str(part) for part in error.instance_path)
    return error.message[:_MAX_MESSAGE] + (f" (at /{where})" if where else "")
