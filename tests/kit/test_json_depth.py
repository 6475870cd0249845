"""`kit.json_depth`: how deeply a JSON value nests, measured without recursion."""

from __future__ import annotations

import json

import pytest

from atrium.kit.json_depth import MAX_JSON_DEPTH, json_depth, too_deep


def nested(depth: int) -> object:
    """Objects and arrays, alternating, `depth` levels deep."""
    value: object = "leaf"
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


@pytest.mark.parametrize(
    ("value", "depth"),
    [
        ("text", 0),
        (None, 0),
        (1.5, 0),
        ({}, 1),
        ([], 1),
        ({"a": 1, "b": [1, 2]}, 2),
        ([[], [[{}]]], 4),
        (json.loads('{"a": {"b": {"c": {}}}, "d": 1}'), 4),
        (nested(64), 64),
    ],
)
def test_the_depth_of_a_value(value: object, depth: int) -> None:
    assert json_depth(value) == depth


def test_the_bound_is_inclusive() -> None:
    assert not too_deep(nested(MAX_JSON_DEPTH))
    assert too_deep(nested(MAX_JSON_DEPTH + 1))


def test_a_value_far_deeper_than_the_recursion_limit_is_measured() -> None:
    value: object = {}
    for _ in range(100_000):
        value = [value]
    assert too_deep(value)
    assert json_depth(value, limit=200_000) == 100_001
