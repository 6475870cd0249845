"""Standard Webhooks signatures (https://www.standardwebhooks.com), with the standard library.

A secret is `whsec_` + base64 of 24 random bytes; the signed content is
`{webhook-id}.{webhook-timestamp}.{body}`; the signature header is `v1,<base64 HMAC-SHA256>`.

Secrets are stored sealed with the deployment's key, as MCP headers are (`secrets_at_rest`;
docs/decisions/0044-webhook-secrets-sealed-and-private-files.md).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

from atrium.secrets_at_rest import SecretBox, SecretsUnavailable

SECRET_PREFIX = "whsec_"
_SECRET_BYTES = 24


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(_SECRET_BYTES)).decode()


def sealed(secret: str, box: SecretBox) -> str:
    """`secret` as stored: encrypted with the deployment's key. A PostgreSQL deployment without
    `ATRIUM_SECRETS_KEY` has no key and keeps it in clear: every webhook needs a secret, and
    refusing them would take webhooks away from it (the server warns at start)."""
    try:
        return box.encrypt(secret)
    except SecretsUnavailable:
        return secret


def opened(stored: str, box: SecretBox) -> str:
    """The secret `sealed` stored; `SecretsUnavailable` when the key does not open it. A secret
    in clear starts with `whsec_`, a Fernet token never does (its first byte is its version)."""
    return stored if stored.startswith(SECRET_PREFIX) else box.decrypt(stored)


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
