"""The agents tests run on a server with every provider configured (keys that are never used:
creating an agent calls no provider), unless a test says otherwise."""

from __future__ import annotations

import pytest

# A loopback address nothing listens on: no test here makes a model request.
PROVIDERS_CONFIGURED: dict[str, object] = {
    "openai_api_key": "sk-test-openai",
    "anthropic_api_key": "sk-ant-test",
    "llm_base_url": "http://127.0.0.1:9/v1",
}


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return dict(PROVIDERS_CONFIGURED)
