"""A worker killed with SIGKILL in the middle of a run: the process that finishes the run sends
its spans, those of the lost attempt included (built from the stored events), and the attempt
that took over is a `retry` span linked to the lost one.

Two real `atrium serve` processes share one database (a SQLite file as in
tests/worker/test_sigkill.py, or a PostgreSQL database of the test's own); the model is an
OpenAI-compatible server run by this test that hangs on the second model request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.conftest import BACKENDS, database_of_its_own
from tests.runs.helpers import RUNS
from tests.runtime.chat_server import ChatServer
from tests.traces.helpers import CALLER_SPAN, CALLER_TRACE, TRACEPARENT, by_name, same_spans
from tests.traces.otlp_receiver import OtlpReceiver
from tests.worker.processes import Servers, process_env

ERROR = 2


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as served:
        yield served


@pytest.fixture(params=BACKENDS)
async def shared_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """The database both processes use (`atrium serve` migrates it at start)."""
    async with database_of_its_own(request.param, tmp_path / "atrium.db") as url:
        yield url


async def test_a_lost_attempt_and_its_retry_are_linked(
    tmp_path: Path, receiver: OtlpReceiver, shared_database: str
) -> None:
    async with ChatServer(stall_request=2) as chat:
        env = process_env(
            tmp_path,
            database_url=shared_database,
            llm_base_url=chat.base_url,
            run_lease_seconds="1.5",
            run_heartbeat_seconds="0.5",
            run_poll_seconds="0.5",
            otlp_endpoint=receiver.endpoint,
        )
        with Servers(tmp_path, env) as servers:
            first = await servers.serve("first")
            async with servers.api(first) as api:
                agent = await api.post(
                    "/v1/agents",
                    json={"name": "llm", "config": {"model": "openai-compatible:local"}},
                )
                created = await api.post(
                    RUNS,
                    json={"prompt": "survive", "agent_id": agent.json()["agent_id"]},
                    headers={"traceparent": TRACEPARENT},
                )
                run_id = created.json()["run_id"]
                for _ in range(300):
                    if len(chat.requests) >= 2:
                        break
                    await asyncio.sleep(0.05)
                assert len(chat.requests) == 2
                # The second request's step is stored (spans are built from stored events).
                for _ in range(300):
                    events = (
                        await api.get(
                            f"{RUNS}/{run_id}/events", headers={"Accept": "application/json"}
                        )
                    ).json()["data"]
                    if any(e["data"].get("index") == 2 for e in events):
                        break
                    await asyncio.sleep(0.05)
            first.kill()

            second = await servers.serve("second")
            async with servers.api(second, timeout=30) as api:
                for _ in range(400):
                    run = (await api.get(f"{RUNS}/{run_id}")).json()
                    if run["status"] == "completed":
                        break
                    await asyncio.sleep(0.05)
                assert run["status"] == "completed", run
                spans = await asyncio.to_thread(
                    receiver.wait_for,
                    lambda got: any(s.attributes.get("atrium.run.id") == run_id for s in got),
                )
                shown = (await api.get(f"{RUNS}/{run_id}/trace")).json()

    spans = receiver.of_trace(CALLER_TRACE)
    [root] = [s for s in spans if s.name.startswith("invoke_agent ")]
    [lost] = by_name(spans, "execute")
    [retry] = by_name(spans, "retry")
    assert root.parent_span_id == CALLER_SPAN
    assert lost.parent_span_id == retry.parent_span_id == root.span_id
    assert lost.status_code == ERROR
    assert lost.attributes == {"atrium.attempt": 1, "atrium.attempt.outcome": "worker_lost"}
    assert retry.attributes == {"atrium.attempt": 2, "atrium.attempt.outcome": "completed"}
    assert retry.links == [(CALLER_TRACE, lost.span_id)]
    assert lost.end_ns <= retry.start_ns
    # The lost attempt's model requests: the first answered, the second cut off by the loss.
    chats = by_name(spans, "chat openai-compatible:local")
    lost_chats = [c for c in chats if c.parent_span_id == lost.span_id]
    assert len(lost_chats) == 2 and lost_chats[-1].status_code == ERROR
    assert [c.parent_span_id for c in chats[2:]] == [retry.span_id] * 2
    # Tokens per request: the retry's answers are the ones stored and billed; the lost
    # attempt's requests have none.
    assert not any("gen_ai.usage.input_tokens" in c.attributes for c in lost_chats)
    billed = sum(int(c.attributes["gen_ai.usage.input_tokens"]) for c in chats[2:])
    assert billed == root.attributes["gen_ai.usage.input_tokens"] > 0
    assert root.attributes["atrium.run.attempts"] == 2
    assert root.attributes["gen_ai.request.model"] == "openai-compatible:local"
    assert root.attributes["gen_ai.provider.name"] == "openai-compatible"
    # The artifact each attempt wrote is an event of its span.
    assert lost.events == ["artifact.created"] and retry.events == ["artifact.created"]
    same_spans(spans, shown["spans"])
