"""`atrium serve` killed with SIGKILL while a run waits for its caller, restarted, answered: the
run resumes from the database on the new process and completes exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from tests.runs.actions_helpers import LOOKUP
from tests.runs.helpers import RUNS, parse_sse
from tests.worker.processes import Servers, process_env


async def _status(api: httpx.AsyncClient, run_id: str, wanted: str) -> dict[str, object]:
    run: dict[str, object] = {}
    for _ in range(400):
        run = (await api.get(f"{RUNS}/{run_id}")).json()
        if run["status"] == wanted:
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run is {run.get('status')}, not {wanted}: {run}")


async def test_a_waiting_run_survives_sigkill_and_completes_once(tmp_path: Path) -> None:
    env = process_env(tmp_path, run_lease_seconds="1.5", run_heartbeat_seconds="0.5")
    with Servers(tmp_path, env) as servers:
        first = await servers.serve("first")
        async with servers.api(first) as api:
            agent = await api.post(
                "/v1/agents", json={"name": "hitl", "config": {"tools": [LOOKUP]}}
            )
            assert agent.status_code == 201, agent.text
            prompt = 'call lookup {"word": "survive"}'
            created = await api.post(
                RUNS, json={"prompt": prompt, "agent_id": agent.json()["agent_id"]}
            )
            run_id = created.json()["run_id"]
            waiting = await _status(api, run_id, "requires_action")

        first.kill()

        second = await servers.serve("second")
        async with servers.api(second, timeout=30) as api:
            still = (await api.get(f"{RUNS}/{run_id}")).json()
            assert still["status"] == "requires_action"
            assert still["required_action"] == waiting["required_action"]
            [call] = still["required_action"]["tool_calls"]
            answer = {"tool_outputs": [{"tool_call_id": call["id"], "output": "still here"}]}
            answered = await api.post(f"{RUNS}/{run_id}/actions", json=answer)
            assert answered.status_code == 200, answered.text
            done = await _status(api, run_id, "completed")
            assert "lookup returned: still here" in str(done["result"])
            billing = done["billing"]
            assert isinstance(billing, dict)
            assert (billing["requests"], billing["tool_calls"]) == (2, 1)
            usage = (await api.get("/v1/analytics/usage")).json()["totals"]
            assert (usage["runs"], usage["completed"], usage["requests"]) == (1, 1, 2)
            frames = parse_sse((await api.get(f"{RUNS}/{run_id}/events")).text)
            kinds = [frame["event"] for frame in frames]
            assert [frame["id"] for frame in frames] == list(range(1, len(frames) + 1))
            assert kinds.count("run.requires_action") == 1
            assert kinds.count("run.completed") == 1 and kinds[-1] == "run.completed"
            assert kinds.count("run.started") == 2
