"""`openai:<model>` takes its key and address from atrium's settings only (docs/guide/models.md):
a run against a chat-completions server on loopback standing in for OpenAI."""

from __future__ import annotations

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer, chat_server

__all__ = ["chat_server"]


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {"openai_api_key": "sk-from-atrium-settings", "openai_base_url": chat_server.base_url}


async def test_an_openai_model_uses_the_key_and_address_of_the_settings(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
) -> None:
    agent_id = await make_agent(model="openai:gpt-4o-mini", tools=[])
    run = await create_run(client, auth, "hello", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == ANSWER
    assert done["model"] == "openai:gpt-4o-mini"
    assert [body["model"] for body in chat_server.requests] == ["gpt-4o-mini"]
    assert chat_server.authorizations == ["Bearer sk-from-atrium-settings"]

    # A run's own model, on the same provider.
    other = await create_run(client, auth, "again", config={"model": "openai:gpt-4.1-nano"})
    assert (await wait_finished(client, auth, other["run_id"]))["status"] == "completed"
    assert chat_server.requests[-1]["model"] == "gpt-4.1-nano"
