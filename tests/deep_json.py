"""Deeply nested JSON as text, for the tests of `kit.json_depth`'s bound: the test client's own
JSON encoder recurses, so bodies this deep are written by hand."""

from __future__ import annotations


def nested(depth: int) -> str:
    """An object `depth` levels deep."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def nested_schema(depth: int) -> str:
    """An object schema `depth` levels deep: objects in `properties` (two levels each) around a
    string's schema (one level) or an array's (two)."""
    levels, odd = divmod(depth - 1, 2)
    inner = '{"type":"string"}' if not odd else '{"type":"array","items":{"type":"string"}}'
    return '{"type":"object","properties":{"a":' * levels + inner + "}}" * levels
