"""Runs that wait for their caller's function tools (docs/design.md#requires-action), over HTTP
with the offline model: `requires_action`, `POST …/actions`, the run resuming, and every way a
wait ends."""

from __future__ import annotations

import asyncio
from datetime import datetime

import httpx
import pytest
from asgi_lifespan import LifespanManager

from atrium.app import create_app
from atrium.auth.service import IssuedKey
from atrium.kit.time import utcnow
from atrium.settings import Settings
from tests.conftest import KeyFactory, bearer
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import RUNS, create_run, wait_finished

ONE_CALL = 'Define it.\ncall lookup {"word": "atrium"}'


@pytest.fixture
async def agent_id(make_agent: AgentFactory) -> str:
    return await make_agent(tools=[LOOKUP])


async def test_a_function_tool_round_trip(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    action = waiting["required_action"]
    assert action["type"] == "tool_calls" and action["expires_at"].endswith("Z")
    [call] = action["tool_calls"]
    assert {k: call[k] for k in ("kind", "name", "server_label", "arguments")} == {
        "kind": "function",
        "name": "lookup",
        "server_label": None,
        "arguments": {"word": "atrium"},
    }
    assert "result" not in waiting and "billing" not in waiting

    answer = {"tool_outputs": [{"tool_call_id": call["id"], "output": "a central hall"}]}
    response = await act(client, auth, run["run_id"], answer)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "queued"
    assert "required_action" not in response.json()

    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert "lookup returned: a central hall" in done["result"]
    # Both model requests are billed, across the wait.
    assert done["billing"]["requests"] == 2
    assert done["billing"]["tool_calls"] == 1

    events = await events_of(client, auth, run["run_id"])
    kinds = [e["event"] for e in events]
    assert kinds.count("run.started") == 2
    # A resumed run is not a retry: no run.restarted, and its attempts start over.
    assert "run.restarted" not in kinds
    assert [e["data"]["attempt"] for e in events if e["event"] == "run.started"] == [1, 1]
    assert kinds.index("tool.called") < kinds.index("run.requires_action")
    assert kinds.index("run.requires_action") < kinds.index("tool.returned")
    required = next(e for e in events if e["event"] == "run.requires_action")
    assert required["data"]["required_action"] == action
    requeued = [e["data"] for e in events if e["event"] == "run.queued"]
    assert requeued[-1]["reason"] == "actions_submitted"
    returned = next(e["data"] for e in events if e["event"] == "tool.returned")
    assert (returned["tool_call_id"], returned["output"], returned["is_error"]) == (
        call["id"],
        "a central hall",
        False,
    )
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))


async def test_a_run_waits_twice_and_the_list_filters_by_the_new_status(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    prompt = 'call lookup {"word": "one"}\ncall lookup {"word": "two"}'
    run = await create_run(client, auth, prompt, agent_id=agent_id)
    outputs = []
    for word in ("one", "two"):
        waiting = await wait_status(client, auth, run["run_id"], "requires_action")
        [call] = waiting["required_action"]["tool_calls"]
        assert call["arguments"] == {"word": word}
        listed = await client.get(RUNS, params={"status": "requires_action"}, headers=auth)
        assert [r["run_id"] for r in listed.json()["data"]] == [run["run_id"]]
        answer = {"tool_outputs": [{"tool_call_id": call["id"], "output": {"meaning": word}}]}
        response = await act(client, auth, run["run_id"], answer)
        assert response.status_code == 200, response.text
        outputs.append(call["id"])
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert len(set(outputs)) == 2
    assert 'lookup returned: {"meaning":"one"}' in done["result"]
    assert 'lookup returned: {"meaning":"two"}' in done["result"]
    assert done["billing"]["requests"] == 3
    assert done["billing"]["tool_calls"] == 2
    usage = await client.get("/v1/analytics/usage", headers=auth)
    assert usage.json()["totals"]["requires_action"] == 2
    assert usage.json()["totals"]["requests"] == 3


async def test_answers_must_match_the_pending_calls(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    output = {"tool_call_id": call_id, "output": "x"}
    bad = [
        ({}, "tool_outputs"),
        ({"tool_outputs": [{"tool_call_id": "nope", "output": "x"}]}, "tool_outputs"),
        ({"tool_outputs": [output, output]}, "tool_outputs"),
        ({"approvals": [{"tool_call_id": call_id, "approve": True}]}, "approvals"),
        ({"tool_outputs": [output], "extra": 1}, "extra"),
        ({"tool_outputs": [{"tool_call_id": call_id}]}, "tool_outputs.0.output"),
    ]
    for body, parameter in bad:
        response = await act(client, auth, run["run_id"], body)
        assert response.status_code == 400, (body, response.text)
        error = response.json()["error"]
        assert error["code"] == "INVALID_PARAMETER"
        assert error["details"]["parameter"] == parameter, (body, error)
    # Nothing was half-written: the run still waits for the same call.
    again = await wait_status(client, auth, run["run_id"], "requires_action")
    assert again["required_action"] == waiting["required_action"]


async def test_two_concurrent_answers_one_wins(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    first, second = await asyncio.gather(
        act(
            client,
            auth,
            run["run_id"],
            {"tool_outputs": [{"tool_call_id": call_id, "output": "A"}]},
        ),
        act(
            client,
            auth,
            run["run_id"],
            {"tool_outputs": [{"tool_call_id": call_id, "output": "B"}]},
        ),
    )
    assert sorted([first.status_code, second.status_code]) == [200, 409]
    loser = first if first.status_code == 409 else second
    assert loser.json()["error"]["code"] == "CONFLICT"
    done = await wait_finished(client, auth, run["run_id"])
    winner = "A" if first.status_code == 200 else "B"
    assert f"lookup returned: {winner}" in done["result"]
    events = await events_of(client, auth, run["run_id"])
    assert [e["event"] for e in events].count("run.completed") == 1
    # After the run finished, an answer is a 409 too.
    late = await act(client, auth, run["run_id"], {"tool_outputs": []})
    assert late.status_code == 409


async def test_idempotency_key_replays_the_answer(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    body = {"tool_outputs": [{"tool_call_id": call_id, "output": "once"}]}
    first = await act(client, auth, run["run_id"], body, **{"Idempotency-Key": "answer-1"})
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    replay = await act(client, auth, run["run_id"], body, **{"Idempotency-Key": "answer-1"})
    assert replay.status_code == 200, replay.text
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json()["run_id"] == run["run_id"]
    other = {"tool_outputs": [{"tool_call_id": call_id, "output": "twice"}]}
    conflict = await act(client, auth, run["run_id"], other, **{"Idempotency-Key": "answer-1"})
    assert conflict.status_code == 409
    assert conflict.json()["error"]["details"]["parameter"] == "Idempotency-Key"
    done = await wait_finished(client, auth, run["run_id"])
    assert "lookup returned: once" in done["result"]
    assert [e["event"] for e in await events_of(client, auth, run["run_id"])].count(
        "run.started"
    ) == 2


async def test_cancel_while_waiting(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    await wait_status(client, auth, run["run_id"], "requires_action")
    response = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    assert response.status_code == 200, response.text
    cancelled = response.json()
    assert cancelled["status"] == "cancelled"
    assert "required_action" not in cancelled
    assert cancelled["billing"]["requests"] == 1
    late = await act(client, auth, run["run_id"], {"tool_outputs": []})
    assert late.status_code == 409
    kinds = [e["event"] for e in await events_of(client, auth, run["run_id"])]
    assert kinds[-1] == "run.cancelled" and kinds.count("run.cancelled") == 1


async def test_a_waiting_run_keeps_its_threads_later_runs_queued(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    later = await create_run(
        client, auth, "and then?", agent_id=agent_id, thread_id=run["thread_id"]
    )
    await asyncio.sleep(0.5)
    still = await client.get(f"{RUNS}/{later['run_id']}", headers=auth)
    assert still.json()["status"] == "queued"
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    await act(
        client, auth, run["run_id"], {"tool_outputs": [{"tool_call_id": call_id, "output": "ok"}]}
    )
    done = await wait_finished(client, auth, later["run_id"])
    first = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == first["status"] == "completed"
    assert "(turn 2)" in done["result"]  # the waiting run's messages reached the thread


async def test_another_accounts_run_is_not_found(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, make_key: KeyFactory
) -> None:
    run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    other: IssuedKey = await make_key("someone-else")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    body = {"tool_outputs": [{"tool_call_id": call_id, "output": "mine"}]}
    response = await act(client, bearer(other.key), run["run_id"], body)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()[
        "status"
    ] == "requires_action"


class TestExpiry:
    @pytest.fixture
    def settings_overrides(self) -> dict[str, object]:
        # The recovery loop (which sweeps expired waits) runs every lease / 3 s, 0.5 s at least.
        return {"run_action_timeout_seconds": 0.5, "run_lease_seconds": 1.5}

    async def test_an_unanswered_wait_expires(
        self, client: httpx.AsyncClient, auth: dict[str, str], agent_id: str
    ) -> None:
        run = await create_run(client, auth, ONE_CALL, agent_id=agent_id)
        waiting = await wait_status(client, auth, run["run_id"], "requires_action")
        done = await wait_finished(client, auth, run["run_id"], within=10)
        assert done["status"] == "failed"
        assert done["error"]["code"] == "ACTION_EXPIRED"
        assert done["billing"]["requests"] == 1
        call_id = waiting["required_action"]["tool_calls"][0]["id"]
        body = {"tool_outputs": [{"tool_call_id": call_id, "output": "too late"}]}
        assert (await act(client, auth, run["run_id"], body)).status_code == 409


class TestAnswerPastExpiryBeforeTheSweep:
    """An answer after `expires_at` but before any sweep failed the run is a 409, as one after
    the sweep is. The app answering has no worker, so no sweep runs: the worker app that parked
    the run is stopped first, long before its next sweep (every lease / 3 s, here 10 s)."""

    @pytest.fixture
    def settings_overrides(self) -> dict[str, object]:
        return {"run_worker": False, "run_action_timeout_seconds": 1.5}

    async def test_a_late_answer_is_a_409(
        self,
        client: httpx.AsyncClient,
        auth: dict[str, str],
        agent_id: str,
        settings: Settings,
    ) -> None:
        worker = create_app(settings.model_copy(update={"run_worker": True}))
        async with LifespanManager(worker):
            transport = httpx.ASGITransport(app=worker)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as it:
                run = await create_run(it, auth, ONE_CALL, agent_id=agent_id)
                waiting = await wait_status(it, auth, run["run_id"], "requires_action")
        expires_at = datetime.fromisoformat(waiting["required_action"]["expires_at"])
        await asyncio.sleep(max(0.0, (expires_at - utcnow()).total_seconds()) + 0.1)
        call_id = waiting["required_action"]["tool_calls"][0]["id"]
        body = {"tool_outputs": [{"tool_call_id": call_id, "output": "too late"}]}
        late = await act(client, auth, run["run_id"], body)
        assert late.status_code == 409, late.text
        error = late.json()["error"]
        assert error["code"] == "CONFLICT"
        assert error["message"].startswith("the run's required action expired at ")
        assert error["details"] == {"run_id": run["run_id"], "status": "requires_action"}
        still = await client.get(f"{RUNS}/{run['run_id']}", headers=auth)
        assert still.json()["status"] == "requires_action"  # the sweep will fail it


async def test_a_waiting_run_with_an_output_schema_answers_an_object(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    schema = {
        "type": "object",
        "properties": {"meaning": {"type": "string"}},
        "required": ["meaning"],
    }
    agent = await make_agent(tools=["write_artifact", LOOKUP], output_schema=schema)
    prompt = (
        'call write_artifact {"name": "before.txt", "content": "written before the wait"}\n'
        'call lookup {"word": "atrium"}\n'
        'output {"meaning": "a hall"}'
    )
    run = await create_run(client, auth, prompt, agent_id=agent)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    answer = {"tool_outputs": [{"tool_call_id": call_id, "output": "a hall"}]}
    assert (await act(client, auth, run["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"] == {"meaning": "a hall"}
    # What the run wrote before it waited is still its artifact.
    assert [a["name"] for a in done["artifacts"]] == ["before.txt"]
