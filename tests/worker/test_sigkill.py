"""A worker killed with SIGKILL in the middle of a run: the run is re-queued and completes once.

Two real `atrium serve` processes share one SQLite file; the model is an OpenAI-compatible
server run by this test, which hangs on the run's second model request, after the first attempt
already wrote its artifact. The first process is killed there.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.runs.helpers import RUNS, parse_sse
from tests.runtime.chat_server import ANSWER, ChatServer
from tests.worker.processes import Servers, process_env


@pytest.fixture
async def chat_server() -> AsyncIterator[ChatServer]:
    async with ChatServer(stall_request=2) as server:
        yield server


async def test_a_killed_workers_run_is_requeued_and_completes_once(
    tmp_path: Path, chat_server: ChatServer
) -> None:
    env = process_env(
        tmp_path,
        llm_base_url=chat_server.base_url,
        run_lease_seconds="1.5",
        run_heartbeat_seconds="0.5",
        run_poll_seconds="0.5",
    )
    with Servers(tmp_path, env) as servers:
        first = await servers.serve("first")
        async with servers.api(first) as api:
            agent = await api.post(
                "/v1/agents",
                json={"name": "llm", "config": {"model": "openai-compatible:local"}},
            )
            assert agent.status_code == 201, agent.text
            created = await api.post(
                RUNS, json={"prompt": "survive", "agent_id": agent.json()["agent_id"]}
            )
            run_id = created.json()["run_id"]
            # The first attempt wrote its artifact and hangs in its second model request.
            for _ in range(300):
                if len(chat_server.requests) >= 2:
                    break
                await asyncio.sleep(0.05)
            assert len(chat_server.requests) == 2
            running = (await api.get(f"{RUNS}/{run_id}")).json()
            assert running["status"] == "running"
            partial = (await api.get(f"{RUNS}/{run_id}/artifacts")).json()["data"]
            assert [a["name"] for a in partial] == ["notes.txt"]
            seen = (
                await api.get(f"{RUNS}/{run_id}/events", headers={"Accept": "application/json"})
            ).json()["data"]
            last_seen = seen[-1]["id"]

        first.kill()

        second = await servers.serve("second")
        async with servers.api(second, timeout=30) as api:
            done = None
            for _ in range(400):
                done = (await api.get(f"{RUNS}/{run_id}")).json()
                if done["status"] in {"completed", "failed", "cancelled"}:
                    break
                await asyncio.sleep(0.05)
            assert done is not None and done["status"] == "completed", done
            assert done["result"].strip() == ANSWER
            # One result, the artifact once, usage of the attempt that finished counted once.
            assert [a["name"] for a in done["artifacts"]] == ["notes.txt"]
            assert done["billing"]["requests"] == 2
            usage = (await api.get("/v1/analytics/usage")).json()["totals"]
            assert (usage["runs"], usage["completed"], usage["requests"]) == (1, 1, 2)
            listed = (await api.get(RUNS)).json()["data"]
            assert [run["run_id"] for run in listed] == [run_id]

            stream = await api.get(f"{RUNS}/{run_id}/events")
            frames = parse_sse(stream.text)
            kinds = [frame["event"] for frame in frames]
            assert [frame["id"] for frame in frames] == list(range(1, len(frames) + 1))
            assert kinds.count("run.started") == 2
            assert kinds.count("run.completed") == 1 and kinds[-1] == "run.completed"
            requeued = [f for f in frames if f["event"] == "run.queued"][1]
            assert requeued["data"]["reason"] == "worker_lost"
            started = [f["data"]["attempt"] for f in frames if f["event"] == "run.started"]
            assert started == [1, 2]
            # The re-execution is announced before its own events: run.restarted, attempt 2.
            restart = kinds.index("run.restarted")
            assert kinds.count("run.restarted") == 1 and kinds[restart + 1] == "run.started"
            assert frames[restart]["data"]["attempt"] == 2
            # Events seen before the kill are kept; a reader resumes after its last event id.
            assert [(e["id"], e["event"]) for e in seen] == [
                (f["id"], f["event"]) for f in frames[:last_seen]
            ]
            resumed = parse_sse(
                (
                    await api.get(
                        f"{RUNS}/{run_id}/events", headers={"Last-Event-ID": str(last_seen)}
                    )
                ).text
            )
            assert resumed == frames[last_seen:]
        assert len(chat_server.requests) == 4


async def test_a_run_that_loses_its_worker_on_the_last_attempt_fails_worker_lost(
    tmp_path: Path,
) -> None:
    async with ChatServer(stall_request=1) as chat:
        env = process_env(
            tmp_path,
            llm_base_url=chat.base_url,
            run_lease_seconds="1",
            run_heartbeat_seconds="0.3",
            run_max_attempts="1",
        )
        with Servers(tmp_path, env) as servers:
            first = await servers.serve("first")
            async with servers.api(first) as api:
                agent = await api.post(
                    "/v1/agents", json={"name": "llm", "config": {"model": "openai-compatible:x"}}
                )
                created = await api.post(
                    RUNS, json={"prompt": "doomed", "agent_id": agent.json()["agent_id"]}
                )
                run_id = created.json()["run_id"]
                for _ in range(300):
                    if chat.requests:
                        break
                    await asyncio.sleep(0.05)
            first.kill()
            # A worker alone recovers it (it listens on no port).
            servers.start("second", "worker")
            api_only = await servers.serve("api", "--no-worker")
            async with servers.api(api_only) as api:
                done = None
                for _ in range(200):
                    done = (await api.get(f"{RUNS}/{run_id}")).json()
                    if done["status"] == "failed":
                        break
                    await asyncio.sleep(0.05)
                assert done is not None and done["status"] == "failed", done
                assert done["error"]["code"] == "WORKER_LOST"
                usage = (await api.get("/v1/analytics/usage")).json()["totals"]
                assert (usage["runs"], usage["failed"]) == (1, 1)
                kinds = [
                    f["event"] for f in parse_sse((await api.get(f"{RUNS}/{run_id}/events")).text)
                ]
                assert kinds[-1] == "run.failed" and kinds.count("run.started") == 1
            assert len(chat.requests) == 1  # never retried past the attempt limit
