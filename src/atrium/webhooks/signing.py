"""Standard Webhooks signatures (https://www.standardwebhooks.com), with the standard library.

A secret is `whsec_` + base64 of 24 random bytes; the signed content is
`{webhook-id}.{webhook-timestamp}.{body}`; the signature header is `v1,<base64 HMAC-SHA256>`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

SECRET_PREFIX = "whsec_"
_SECRET_BYTES = 24


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def sign(secret: str, *, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value of one message."""
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str, *, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """Every header of a delivery attempt."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, msg_id=msg_id, timestamp=timestamp, body=body),
        "content-type": "application/json",
        "user-agent": "atrium-webhooks",
    }
