"""API key material: generation, hashing and format checks."""

from __future__ import annotations

import hashlib
import secrets

KEY_PREFIX = "atr_"
_RANDOM_BYTES = 32
# Keys are compared by looking up their hash, so the shape check only bounds the work done on junk.
_MAX_KEY_LENGTH = 128


def generate_key() -> str:
    """A new key: `atr_` + 32 random bytes, url-safe (43 characters)."""
    return KEY_PREFIX + secrets.token_urlsafe(_RANDOM_BYTES)


def hash_key(key: str) -> str:
    """SHA-256 hex digest: the only form in which a key is stored."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def looks_like_key(value: str) -> bool:
    return value.startswith(KEY_PREFIX) and 8 < len(value) <= _MAX_KEY_LENGTH and value.isascii()


def display_prefix(key: str) -> str:
    return key[:12]
