"""JSON nested past `kit.json_depth`'s bound in a run's inputs is a 400 naming the parameter, and
nothing is stored: `metadata`, a function tool's output. A run stored
with deeper metadata (written without the bound) still shows, in its list and on its own."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import update

from atrium.db.engine import Database
from atrium.db.models import Run
from atrium.kit.json_depth import MAX_JSON_DEPTH
from tests.deep_json import nested
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, wait_status
from tests.runs.helpers import RUNS, create_run, wait_finished

JSON = {"Content-Type": "application/json"}


def assert_400_on(response: httpx.Response, parameter: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["details"]["parameter"]) == ("INVALID_PARAMETER", parameter)
    assert f"more than {MAX_JSON_DEPTH} levels deep" in error["message"], error


async def _post(
    client: httpx.AsyncClient, auth: dict[str, str], path: str, body: str
) -> httpx.Response:
    return await client.post(path, content=body, headers={**auth, **JSON})


async def test_metadata_nested_too_deep_is_a_400_and_stores_nothing(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for depth in (MAX_JSON_DEPTH + 1, 300):
        body = '{"prompt":"hi","metadata":' + nested(depth) + "}"
        assert_400_on(await _post(client, auth, RUNS, body), "metadata")
    listed = await client.get(RUNS, headers=auth)
    assert listed.status_code == 200 and listed.json()["data"] == []
    body = '{"prompt":"hi","metadata":' + nested(MAX_JSON_DEPTH) + "}"
    created = await _post(client, auth, RUNS, body)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"] == json.loads(nested(MAX_JSON_DEPTH))


async def test_a_stored_run_with_deeper_metadata_still_shows(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    run = await create_run(client, auth, "hi", metadata={"kept": True})
    await wait_finished(client, auth, run["run_id"])
    async with db.transaction() as session:
        await session.execute(
            update(Run).where(Run.id == run["run_id"]).values(run_metadata=json.loads(nested(300)))
        )
    listed = await client.get(RUNS, headers=auth)
    assert listed.status_code == 200, listed.text
    assert [(r["run_id"], r["metadata"]) for r in listed.json()["data"]] == [(run["run_id"], {})]
    one = await client.get(f"{RUNS}/{run['run_id']}", headers=auth)
    assert one.status_code == 200, one.text
    assert one.json()["metadata"] == {}


async def test_a_function_output_nested_too_deep_is_a_400_and_the_run_still_waits(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent_id = await make_agent(tools=[LOOKUP])
    run = await create_run(client, auth, 'call lookup {"word": "deep"}', agent_id=agent_id)
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    call_id = waiting["required_action"]["tool_calls"][0]["id"]
    path = f"{RUNS}/{run['run_id']}/actions"
    for depth in (MAX_JSON_DEPTH + 1, 300):
        body = f'{{"tool_outputs":[{{"tool_call_id":"{call_id}","output":{nested(depth)}}}]}}'
        assert_400_on(await _post(client, auth, path, body), "tool_outputs")
    still = await wait_status(client, auth, run["run_id"], "requires_action")
    assert still["required_action"] == waiting["required_action"]
    output = json.loads(nested(MAX_JSON_DEPTH))
    answered = await act(
        client, auth, run["run_id"], {"tool_outputs": [{"tool_call_id": call_id, "output": output}]}
    )
    assert answered.status_code == 200, answered.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
