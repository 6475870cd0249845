"""`if_busy` on `POST /agent/runs` (docs/guide/threads.md): every policy against a run that is
mid-stream, one that waits for its caller, and one that is queued, over HTTP; what the next run
of the thread is given (kept or dropped) is read from a model that answers with it."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import httpx
import pytest

from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.busy_helpers import PARTIAL, agents, post_run, thread_runs, wait_event
from tests.runs.helpers import create_run, wait_finished

ONE_CALL = 'Define it.\ncall lookup {"word": "atrium"}'
CANCELS = ["interrupt", "rollback"]


async def _follow_up(
    client: httpx.AsyncClient, auth: dict[str, str], thread_id: str, agent_id: str, policy: str
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """A run of the echoing agent sent to the busy thread with `policy`: the finished run and
    what its model was given."""
    response = await post_run(
        client, auth, prompt="And now?", thread_id=thread_id, agent_id=agent_id, if_busy=policy
    )
    assert response.status_code == 201, response.text
    done = await wait_finished(client, auth, response.json()["run_id"])
    assert done["status"] == "completed", done
    return done, json.loads(done["result"])


async def _cancelled(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, reason: str
) -> dict[str, Any]:
    run = await wait_finished(client, auth, run_id)
    assert (run["status"], run["cancel_reason"]) == ("cancelled", reason), run
    events = await events_of(client, auth, run_id)
    assert events[-1]["event"] == "run.cancelled"
    assert events[-1]["data"]["cancel_reason"] == reason
    return run


@pytest.mark.parametrize("policy", CANCELS)
@pytest.mark.parametrize("earlier_turn", [False, True], ids=["first-turn", "later-turn"])
async def test_a_run_mid_stream(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    policy: str,
    earlier_turn: bool,
) -> None:
    """The running run stops at once; interrupt keeps its prompt and the answer it had
    streamed, rollback drops it. First in its thread the run makes a single request
    (runtime/answer.py), later the agent graph does: both are kept alike."""
    stalls, echoes = await agents(make_agent, models)
    prompts: list[str] = []
    thread: dict[str, Any] = {}
    if earlier_turn:
        first = await create_run(client, auth, "Name a colour", agent_id=echoes)
        assert (await wait_finished(client, auth, first["run_id"]))["status"] == "completed"
        thread, prompts = {"thread_id": first["thread_id"]}, ["Name a colour"]
    running = await create_run(client, auth, "Write an essay", agent_id=stalls, **thread)
    await wait_event(client, auth, running["run_id"], "message.delta")

    done, given = await _follow_up(client, auth, running["thread_id"], echoes, policy)
    stopped = await _cancelled(client, auth, running["run_id"], policy)

    assert done["started_at"] >= stopped["finished_at"]
    if policy == "interrupt":
        assert given["prompts"] == [*prompts, "Write an essay", "And now?"]
        assert given["answers"][-1] == PARTIAL
    else:
        assert given["prompts"] == [*prompts, "And now?"]
        assert PARTIAL not in given["answers"]


@pytest.mark.parametrize("policy", CANCELS)
async def test_a_run_waiting_for_its_caller(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    policy: str,
) -> None:
    """A waiting run is cancelled in the create's transaction, billed what it used; interrupt
    keeps its tool call, answered for the model by a marked synthetic result."""
    _, echoes = await agents(make_agent, models)
    librarian = await make_agent(tools=[LOOKUP])
    waiting = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    await wait_status(client, auth, waiting["run_id"], "requires_action")

    _, given = await _follow_up(client, auth, waiting["thread_id"], echoes, policy)
    stopped = await _cancelled(client, auth, waiting["run_id"], policy)

    assert "required_action" not in stopped
    assert (stopped["billing"]["requests"], stopped["billing"]["tool_calls"]) == (1, 1)
    if policy == "interrupt":
        assert given["prompts"] == [ONE_CALL, "And now?"]
        assert (given["calls"], given["returns"]) == (["lookup"], ["lookup"])
    else:
        assert given == {"prompts": ["And now?"], "answers": [], "calls": [], "returns": []}
    late = await act(client, auth, waiting["run_id"], {"tool_outputs": []})
    assert late.status_code == 409


@pytest.mark.parametrize("policy", CANCELS)
async def test_a_queued_run(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    policy: str,
) -> None:
    """A queued run (here behind a waiting one) is cancelled before it ever started: it had
    produced nothing, so the next run is given nothing of it either way."""
    _, echoes = await agents(make_agent, models)
    librarian = await make_agent(tools=[LOOKUP])
    waiting = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    thread_id = waiting["thread_id"]
    await wait_status(client, auth, waiting["run_id"], "requires_action")
    queued = await create_run(client, auth, "Name a tree", thread_id=thread_id)
    assert queued["status"] == "queued"

    _, given = await _follow_up(client, auth, thread_id, echoes, policy)
    never = await _cancelled(client, auth, queued["run_id"], policy)
    await _cancelled(client, auth, waiting["run_id"], policy)

    assert never["started_at"] is None and never["billing"]["requests"] == 0
    assert "Name a tree" not in given["prompts"]
    assert given["prompts"][-1] == "And now?"


async def test_reject_stores_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    librarian = await make_agent(tools=[LOOKUP])
    waiting = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    thread_id = waiting["thread_id"]
    await wait_status(client, auth, waiting["run_id"], "requires_action")

    response = await post_run(client, auth, prompt="Hi", thread_id=thread_id, if_busy="reject")
    assert response.status_code == 409, response.text
    error = response.json()["error"]
    assert error["code"] == "THREAD_BUSY"
    assert error["details"] == {"parameter": "thread_id", "thread_id": thread_id}
    assert [run["run_id"] for run in await thread_runs(client, auth, thread_id)] == [
        waiting["run_id"]
    ]
    assert await wait_status(client, auth, waiting["run_id"], "requires_action")

    # Idle again (the waiting run cancelled by its caller): the same request goes through.
    await client.post(f"/api/v1/public/agent/runs/{waiting['run_id']}/cancel", headers=auth)
    assert (await wait_finished(client, auth, waiting["run_id"]))["cancel_reason"] == "client"
    response = await post_run(client, auth, prompt="Hi", thread_id=thread_id, if_busy="reject")
    assert response.status_code == 201, response.text
    done = await wait_finished(client, auth, response.json()["run_id"])
    # The run cancelled by its caller added nothing: this is the thread's first turn.
    assert done["result"].startswith("Offline answer (turn 1) to: Hi.")


async def test_enqueue_is_the_default(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    librarian = await make_agent(tools=[LOOKUP])
    waiting = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    await wait_status(client, auth, waiting["run_id"], "requires_action")
    for body in ({}, {"if_busy": "enqueue"}):
        response = await post_run(
            client, auth, prompt="Later", thread_id=waiting["thread_id"], **body
        )
        assert response.status_code == 201 and response.json()["status"] == "queued"
    assert await wait_status(client, auth, waiting["run_id"], "requires_action")
    statuses = [run["status"] for run in await thread_runs(client, auth, waiting["thread_id"])]
    assert statuses == ["requires_action", "queued", "queued"]


@pytest.mark.parametrize("value", ["sometimes", "", "REJECT", 1, None, ["reject"]])
async def test_an_unknown_policy_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], value: object
) -> None:
    response = await post_run(client, auth, prompt="Hi", if_busy=value)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["details"]["parameter"]) == ("INVALID_PARAMETER", "if_busy")
    listed = await client.get("/api/v1/public/agent/runs", headers=auth)
    assert listed.json()["data"] == []


@pytest.mark.parametrize("policy", ["reject", "interrupt", "rollback"])
async def test_a_new_thread_is_never_busy(
    client: httpx.AsyncClient, auth: dict[str, str], policy: str
) -> None:
    response = await post_run(client, auth, prompt="Hi", if_busy=policy)
    assert response.status_code == 201, response.text
    done = await wait_finished(client, auth, response.json()["run_id"])
    assert done["status"] == "completed" and "cancel_reason" not in done


async def test_an_idempotent_retry_is_not_rejected(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    """The first request made the run that keeps the thread busy: its retry gets that run."""
    librarian = await make_agent(tools=[LOOKUP])
    first = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    await wait_status(client, auth, first["run_id"], "requires_action")
    body = {"prompt": "Next", "thread_id": first["thread_id"], "if_busy": "interrupt"}
    headers = {**auth, "Idempotency-Key": "busy-1"}
    made = await client.post("/api/v1/public/agent/runs", json=body, headers=headers)
    again = await client.post("/api/v1/public/agent/runs", json=body, headers=headers)
    assert (made.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["run_id"] == made.json()["run_id"]
    other = await client.post(
        "/api/v1/public/agent/runs", json={**body, "if_busy": "reject"}, headers=headers
    )
    assert other.status_code == 409 and other.json()["error"]["code"] == "CONFLICT"


async def test_concurrent_rejects_let_one_through(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    """Twenty rejects at once on an idle thread: the first one decided queues its run (one
    that stays running), and the thread is busy for every other."""
    stalls, _ = await agents(make_agent, models)
    first = await create_run(client, auth, "Start")
    thread_id = first["thread_id"]
    assert (await wait_finished(client, auth, first["run_id"]))["status"] == "completed"
    body = {"thread_id": thread_id, "agent_id": stalls, "if_busy": "reject"}
    responses = await asyncio.gather(
        *(post_run(client, auth, prompt=f"p{i}", **body) for i in range(20))
    )
    codes = sorted(response.status_code for response in responses)
    assert codes == [201] + [409] * 19, codes
    runs = await thread_runs(client, auth, thread_id)
    assert len(runs) == 2
    await client.post(f"/api/v1/public/agent/runs/{runs[1]['run_id']}/cancel", headers=auth)
    assert (await wait_finished(client, auth, runs[1]["run_id"]))["cancel_reason"] == "client"


async def test_concurrent_interrupts_leave_one_run_and_never_overlap(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    """Ten interrupts at once on a thread whose run is streaming: each cancels the ones
    decided before it, so the last one decided is the one that completes; every prompt has an
    outcome, and no two runs of the thread ever ran at the same time."""
    stalls, echoes = await agents(make_agent, models)
    running = await create_run(client, auth, "Write an essay", agent_id=stalls)
    thread_id = running["thread_id"]
    await wait_event(client, auth, running["run_id"], "message.delta")
    responses = await asyncio.gather(
        *(
            post_run(
                client,
                auth,
                prompt=f"p{i}",
                thread_id=thread_id,
                agent_id=echoes,
                if_busy="interrupt",
            )
            for i in range(10)
        )
    )
    assert [response.status_code for response in responses] == [201] * 10
    finished = [
        await wait_finished(client, auth, response.json()["run_id"]) for response in responses
    ]
    statuses = sorted(run["status"] for run in finished)
    assert statuses == ["cancelled"] * 9 + ["completed"], statuses
    assert all(run["cancel_reason"] == "interrupt" for run in finished if "cancel_reason" in run)
    runs = await thread_runs(client, auth, thread_id)
    assert [run["status"] for run in runs[1:]] == ["cancelled"] * 9 + ["completed"]
    spans = sorted(
        (run["started_at"], run["finished_at"]) for run in runs if run["started_at"] is not None
    )
    for (_, ended), (started, _) in itertools.pairwise(spans):
        assert ended <= started, spans


async def test_the_offline_model_after_an_interrupted_call(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    """The offline model counts the interrupted prompt as a turn, and is not misled by the
    synthetic result of its open call (sent in one request with the new prompt) into
    thinking it already wrote its artifact."""
    librarian = await make_agent(tools=[LOOKUP])
    waiting = await create_run(client, auth, ONE_CALL, agent_id=librarian)
    await wait_status(client, auth, waiting["run_id"], "requires_action")
    run = await create_run(
        client, auth, "Name a bird", thread_id=waiting["thread_id"], if_busy="interrupt"
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["result"] == "Offline answer (turn 2) to: Name a bird. I wrote answer.md."
    assert [artifact["name"] for artifact in done["artifacts"]] == ["answer.md"]
