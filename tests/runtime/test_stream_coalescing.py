"""A slow model's streamed text over the wire with `ATRIUM_STREAM_COALESCE_MS`: the
run ends with the same text whatever the window; a window joins the text chunks the agent loop
handles (so the run's `message.delta` events), 0 keeps one per chunk."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, read_stream, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer

_PAUSE = 0.1  # seconds before each of the answer's nine words


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    async with ChatServer(pause=_PAUSE) as server:
        yield server


@pytest.fixture(params=[5_000, 200, 0], ids=["window-5s", "default", "off"])
def coalesce_ms(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture
def settings_overrides(chat_server: ChatServer, coalesce_ms: int) -> dict[str, object]:
    overrides: dict[str, object] = {"llm_base_url": chat_server.base_url}
    if coalesce_ms != 200:  # the default is left unset
        overrides["stream_coalesce_ms"] = coalesce_ms
    return overrides


async def test_a_streamed_answer_arrives_whole_with_or_without_coalescing(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    coalesce_ms: int,
) -> None:
    agent_id = await make_agent(model="openai-compatible:local-llm")
    run = await create_run(client, auth, "hello", agent_id=agent_id)
    frames = await read_stream(client, auth, run["run_id"])  # followed live, from the start
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == ANSWER
    deltas = [f["data"]["text"] for f in frames if f["event"] == "message.delta"]
    assert "".join(deltas) == done["result"]
    words = len(ANSWER.split(" "))
    if coalesce_ms == 5_000:
        # The first word at once, the other eight (0.8 s of the model) held and joined until
        # the finish: two text deltas reach the run's events, at most.
        assert 1 <= len(deltas) <= 2, deltas
    elif coalesce_ms == 0:
        # One delta per word reaches the run; the recorder joins only those within its 50 ms
        # flush, and the words are 100 ms apart.
        assert len(deltas) > 2, deltas
    else:
        assert len(deltas) <= words
