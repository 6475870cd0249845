"""Any key may name any model: memory must not grow with the number of names
(docs/decisions/0019-bounded-model-cache.md).

Before the fix each new `openai-compatible:<name>` built its own OpenAI client (~0.84 MB, a TLS
context and a connection pool) and kept it, with its model and agent, for the process's life.
"""

from __future__ import annotations

import gc

import httpx
import pytest
from openai import AsyncOpenAI

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer, chat_server

__all__ = ["chat_server"]

CACHE_SIZE = 4


@pytest.fixture
def settings_overrides(chat_server: ChatServer) -> dict[str, object]:
    return {"llm_base_url": chat_server.base_url, "model_cache_size": CACHE_SIZE}


def _clients_of(base_url: str) -> int:
    """OpenAI clients alive in this process that talk to `base_url`."""
    gc.collect()
    return sum(
        isinstance(o, AsyncOpenAI) and str(o.base_url).rstrip("/") == base_url
        for o in gc.get_objects()
    )


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


async def test_runs_of_many_model_names_share_one_client_and_a_bounded_cache(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
    models: ModelRegistry,
) -> None:
    names = [f"local-llm-{i}" for i in range(3 * CACHE_SIZE)]
    for name in names:
        agent_id = await make_agent(model=f"openai-compatible:{name}", tools=[])
        run = await create_run(client, auth, f"hello {name}", agent_id=agent_id)
        done = await wait_finished(client, auth, run["run_id"])
        assert (done["status"], done["result"].strip()) == ("completed", ANSWER), done
    assert [request["model"] for request in chat_server.requests] == names
    assert _clients_of(chat_server.base_url) == 1
    assert models.providers == 1
    assert models.cached <= CACHE_SIZE


async def test_ten_thousand_names_keep_memory_flat(
    chat_server: ChatServer, models: ModelRegistry
) -> None:
    def resolve(names: range) -> None:
        for i in names:
            models.resolve(f"openai-compatible:name-{i}")

    resolve(range(20))
    assert _clients_of(chat_server.base_url) == 1  # before the fix: 20, 17 MB
    resolve(range(20, 1_000))  # warm-up: the cache is full, the allocator has its pools
    before = _rss_mib()
    resolve(range(1_000, 11_000))
    growth = _rss_mib() - before
    assert models.cached == CACHE_SIZE
    assert models.providers == 1
    assert _clients_of(chat_server.base_url) == 1
    # Measured 0.0 MiB (before the fix: ~8.4 GB for 10,000 names, ~0.84 MB each).
    assert growth < 8, f"RSS grew {growth:.1f} MiB over 10,000 model names"
