"""Prefixed, random, url-safe identifiers (`run_…`, `thr_…`, `agt_…`)."""

from __future__ import annotations

import secrets


def new_id(prefix: str, nbytes: int = 16) -> str:
    """`prefix_` + url-safe random text: unguessable, so ids never reveal counts or order."""
    return f"{prefix}_{secrets.token_urlsafe(nbytes).replace('-', 'a').replace('_', 'b')}"
