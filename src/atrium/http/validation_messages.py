"""Validation errors in atrium's words: pydantic's messages ("Value error, …", "Input should be
a valid dictionary", "Extra inputs are not permitted") name the framework, not the request.

Each error type pydantic reports for our schemas gets a sentence that starts with the
parameter; a type not listed here keeps pydantic's text, without its "Value error, " prefix.
"""

from __future__ import annotations

from typing import Any, Final

# A key that belongs inside `config` but was sent at the top of an agent or run body.
CONFIG_KEYS: Final = frozenset(
    {"model", "temperature", "instructions", "max_output_tokens", "tools", "output_schema"}
)

_TYPE_NAMES: Final = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "dict_type": "a JSON object",
    "model_type": "a JSON object",
    "model_attributes_type": "a JSON object",
    "list_type": "a JSON array",
    "date_type": "a date written YYYY-MM-DD",
    "date_parsing": "a date written YYYY-MM-DD",
    "date_from_datetime_parsing": "a date written YYYY-MM-DD",
}
_PREFIXES: Final = ("Value error, ", "Assertion failed, ")


def validation_message(parameter: str, error: dict[str, Any]) -> str:
    """One sentence about `parameter` for one pydantic error dict (`type`, `msg`, `ctx`)."""
    error_type: str = error.get("type", "")
    ctx: dict[str, Any] = error.get("ctx") or {}
    if error_type == "missing":
        return f"{parameter} is required"
    if error_type == "json_invalid":
        return "request body is not valid JSON"
    if error_type == "extra_forbidden":
        if parameter in CONFIG_KEYS:
            return f"{parameter} belongs in config.{parameter}"
        return f"{parameter} is not a field of this request"
    if parameter == "body" and error_type in {"model_attributes_type", "dict_type", "model_type"}:
        return "request body must be a JSON object"
    if error_type in _TYPE_NAMES:
        return f"{parameter} must be {_TYPE_NAMES[error_type]}"
    bound = _bound_message(error_type, ctx)
    if bound is not None:
        return f"{parameter} {bound}"
    if error_type in {"literal_error", "enum"}:
        return f"{parameter} must be {ctx.get('expected', 'one of the allowed values')}"
    message = str(error.get("msg", "invalid value"))
    for prefix in _PREFIXES:
        message = message.removeprefix(prefix)
    return f"{parameter}: {message}"


def _bound_message(error_type: str, ctx: dict[str, Any]) -> str | None:
    match error_type:
        case "string_too_short":
            least = ctx.get("min_length", 1)
            return "must not be empty" if least == 1 else f"must be at least {least} characters"
        case "string_too_long":
            return f"must be at most {ctx.get('max_length')} characters"
        case "too_short":
            return f"must have at least {ctx.get('min_length')} items"
        case "too_long":
            return f"must have at most {ctx.get('max_length')} items"
        case "greater_than_equal":
            return f"must be at least {ctx.get('ge')}"
        case "greater_than":
            return f"must be greater than {ctx.get('gt')}"
        case "less_than_equal":
            return f"must be at most {ctx.get('le')}"
        case "less_than":
            return f"must be less than {ctx.get('lt')}"
    return None
