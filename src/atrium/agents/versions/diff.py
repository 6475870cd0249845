"""The JSON Patch (RFC 6902) between two configs, with the value each change drops."""

from __future__ import annotations

from typing import Any


def _pointer(path: str, key: str | int) -> str:
    # RFC 6901: `~` and `/` in a key are escaped, `~` first.
    return f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"


def json_patch(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """The operations that turn `before` into `after`: objects key by key, lists of the same
    length item by item, anything else replaced whole. Removals come in reverse key order and
    list items by index, so applying the operations in order gives `after`."""
    if isinstance(before, dict) and isinstance(after, dict):
        operations: list[dict[str, Any]] = []
        for key in sorted(before.keys() - after.keys(), reverse=True):
            operations.append({"op": "remove", "path": _pointer(path, key), "before": before[key]})
        for key in sorted(after):
            if key not in before:
                operations.append({"op": "add", "path": _pointer(path, key), "value": after[key]})
            else:
                operations.extend(json_patch(before[key], after[key], _pointer(path, key)))
        return operations
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            operation
            for index, (old, new) in enumerate(zip(before, after, strict=True))
            for operation in json_patch(old, new, _pointer(path, index))
        ]
    if before == after and type(before) is type(after):
        return []
    return [{"op": "replace", "path": path, "value": after, "before": before}]
