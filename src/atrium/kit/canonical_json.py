"""A JSON value's canonical text and its hash: equal values, equal text (an agent version's
content hash)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def canonical_json(config: Mapping[str, Any]) -> str:
    """Keys sorted, no spaces, text as is: two configs are equal exactly when these are."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(config: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of `canonical_json`."""
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()
