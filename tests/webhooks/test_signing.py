"""The pieces without I/O: signatures match the reference implementation, the retry schedule.
(The address rules of webhook URLs are outbound targets': `tests/outbound/`.)"""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook

from atrium.settings import Settings
from atrium.webhooks import signing
from atrium.webhooks.sender import backoff_seconds


def test_secrets_and_signatures_match_the_reference_implementation() -> None:
    secret = signing.new_secret()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 24
    assert signing.new_secret() != secret
    body = '{"run_id":"run_x","text":"caf\u00e9 \u2603"}'.encode()
    stamp = int(datetime.now(UTC).timestamp())
    headers = signing.headers(secret, msg_id="msg_1", timestamp=stamp, body=body)
    reference = Webhook(secret).sign("msg_1", datetime.fromtimestamp(stamp, UTC), body.decode())
    assert headers["webhook-signature"] == reference
    assert Webhook(secret).verify(body, headers) == {"run_id": "run_x", "text": "caf\u00e9 \u2603"}
    tampered = body.replace(b"run_x", b"run_y")
    with pytest.raises(Exception, match="signature"):
        Webhook(secret).verify(tampered, headers)


def test_the_default_retry_schedule() -> None:
    settings = Settings(_env_file=None)
    waits = [
        backoff_seconds(settings, attempt) for attempt in range(1, settings.webhook_max_attempts)
    ]
    expected = [5, 20, 80, 320, 1280, 5120, 20480]
    assert len(waits) == len(expected)
    for wait, nominal in zip(waits, expected, strict=True):
        assert nominal * 0.9 <= wait <= min(nominal * 1.1, 21600)
    assert backoff_seconds(settings, 20) == pytest.approx(21600, rel=0.1)
    assert backoff_seconds(settings, 20) <= 21600


def test_the_jitter_leaves_the_process_wide_random_state_alone() -> None:
    """The sender runs in the host's process: its jitter must not move `random`'s state (in
    the fuzz tests, a delivery retried in the background broke Hypothesis's determinism)."""
    settings = Settings(_env_file=None)
    state = random.getstate()
    waits = {backoff_seconds(settings, 1) for _ in range(20)}
    assert random.getstate() == state
    assert len(waits) > 1, "still jittered"
