"""The name for a JSON object whose keys nobody fixes in advance.

`JsonObject` marks the values that are free-form by their nature: a run's metadata, a tool's
arguments, a JSON Schema, a run's structured result, an event's payload as it travels to
readers. Rows and records whose keys the code decides are typed (TypedDicts or dataclasses
beside the code that writes them), so a `dict[str, Any]` written anywhere else asks why.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]
