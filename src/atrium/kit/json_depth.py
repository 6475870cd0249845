"""How deeply a JSON value nests, and the one bound every JSON input is held to.

Free-form JSON (run metadata, output schemas, function tools' outputs, MCP tools' results) is
parsed by the framework with no depth limit short of Python's recursion limit, and then fails
far from where it came in: pydantic refuses to serialize past 255 levels (a run's `metadata`
stored, then every response showing it a 500), and jsonschema's meta-schema check spends about
five Python frames a level (a schema 100 objects deep is a RecursionError). Inputs deeper than
`MAX_JSON_DEPTH` are refused where they enter (docs/decisions/0042-json-depth-and-input-edges.md).
"""

from __future__ import annotations

from typing import Final

MAX_JSON_DEPTH: Final = 64
"""Objects and arrays nested more than this are refused: a schema this deep needs at most ~530
of Python's 1,000 frames to check, and no real metadata or tool output comes near it."""

TOO_DEEP: Final = f"must not nest objects and arrays more than {MAX_JSON_DEPTH} levels deep"


def json_depth(value: object, *, limit: int = MAX_JSON_DEPTH) -> int:
    """How many objects and arrays `value` nests (a scalar 0, `{}` and `[1]` 1), counted up to
    `limit + 1` at most. Walked without recursion, so a value of any depth is measured."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] | tuple[object, ...] = list(node.values())
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def too_deep(value: object) -> bool:
    """True when `value` nests objects and arrays more than `MAX_JSON_DEPTH` levels."""
    return json_depth(value) > MAX_JSON_DEPTH
