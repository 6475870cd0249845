"""`run.requires_action` webhooks: a caller learns that a run waits for it without holding a
stream open. The payload is the run as it was when it started waiting (with `required_action`)."""

from __future__ import annotations

import asyncio

import httpx

from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, wait_status
from tests.runs.helpers import RUNS, wait_finished
from tests.webhooks.receiver import Receiver, verify

HOOKS = "/v1/webhooks"


async def test_waits_are_delivered_to_subscribers_and_the_runs_own_webhook(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    receiver: Receiver,
    make_agent: AgentFactory,
) -> None:
    waits = (
        await client.post(
            HOOKS,
            json={"url": receiver.url("/waits"), "events": ["run.requires_action"]},
            headers=auth,
        )
    ).json()
    default = (
        await client.post(HOOKS, json={"url": receiver.url("/default")}, headers=auth)
    ).json()
    assert default["events"] == ["run.completed", "run.failed", "run.cancelled"]
    agent_id = await make_agent(tools=[LOOKUP])
    created = await client.post(
        RUNS,
        json={
            "prompt": 'call lookup {"word": "hook"}',
            "agent_id": agent_id,
            "webhook_url": receiver.url("/own"),
        },
        headers=auth,
    )
    run = created.json()
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")

    # Distinct deliveries: a retry of one (same webhook-id) is at-least-once delivery at work.
    [item] = await receiver.wait_for_distinct("/waits", 1)
    payload = verify(waits["secret"], item)
    assert payload["status"] == "requires_action"
    assert payload["required_action"] == waiting["required_action"]
    [own] = await receiver.wait_for_distinct("/own", 1)
    assert verify(run["webhook_secret"], own)["required_action"] == waiting["required_action"]

    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    await act(
        client, auth, run["run_id"], {"tool_outputs": [{"tool_call_id": call_id, "output": "x"}]}
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed"
    [finished] = await receiver.wait_for_distinct("/default", 1)
    assert verify(default["secret"], finished)["status"] == "completed"
    own_items = await receiver.wait_for_distinct("/own", 2)
    assert [verify(run["webhook_secret"], i)["status"] for i in own_items] == [
        "requires_action",
        "completed",
    ]
    await asyncio.sleep(0.3)  # long enough for a stray delivery to show up
    assert len(receiver.distinct("/waits")) == 1 and len(receiver.distinct("/default")) == 1
    listed = await client.get(f"{HOOKS}/deliveries", params={"run_id": run["run_id"]}, headers=auth)
    assert sorted(d["event"] for d in listed.json()["data"]) == [
        "run.completed",
        "run.completed",
        "run.requires_action",
        "run.requires_action",
    ]
