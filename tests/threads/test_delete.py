"""`DELETE /threads/{id}`: nothing of the thread is left in any table, usage stays; a run
streaming at that moment is cancelled, and another thread's run streaming beside it completes
with every event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel
from sqlalchemy import select

from atrium.db.base import Base
from atrium.db.engine import Database
from atrium.db.models import ThreadSummary
from atrium.kit.ids import new_id
from atrium.runtime.llm_models import ModelRegistry
from atrium.threads import deletion
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, events_of, wait_status
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.threads.helpers import THREADS, all_messages, create_thread

MARKER = "zebra-marker-5e1f"


async def _leftovers(db: Database, needles: set[str]) -> list[tuple[str, Any]]:
    """(table, row) of every row, in every table, that mentions one of `needles` in any
    column (text, JSON or bytes)."""
    found: list[tuple[str, Any]] = []
    async with db.session(write=False) as session:
        for table in Base.metadata.sorted_tables:
            for row in (await session.execute(select(table))).all():
                for value in row:
                    if isinstance(value, bytes):
                        text = value.decode("utf-8", "replace")
                    elif isinstance(value, dict | list):
                        text = json.dumps(value)
                    else:
                        text = str(value)
                    if any(needle in text for needle in needles):
                        found.append((table.name, row))
                        break
    return found


async def _run_ids(client: httpx.AsyncClient, auth: dict[str, str], thread_id: str) -> set[str]:
    page = (await client.get(RUNS, params={"thread_id": thread_id}, headers=auth)).json()
    return {run["run_id"] for run in page["data"]}


@pytest.mark.parametrize("settings_overrides", [{"allow_private_targets": True}], ids=["private"])
async def test_a_deleted_thread_leaves_no_row_but_usage(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, make_agent: AgentFactory
) -> None:
    thread = (await create_thread(client, auth, metadata={"note": MARKER}))["id"]
    # A completed run that wrote an artifact, with a webhook delivery (to a closed port).
    first = await create_run(
        client,
        auth,
        f"remember {MARKER}",
        thread_id=thread,
        webhook_url="http://127.0.0.1:1/hook",
    )
    await wait_finished(client, auth, first["run_id"])
    # A run that waited for its caller and was answered (a run_actions row).
    waited = await create_run(
        client,
        auth,
        'call lookup {"word": "x"}',
        thread_id=thread,
        agent_id=await make_agent(tools=[LOOKUP]),
    )
    await wait_status(client, auth, waited["run_id"], "requires_action")
    answer = {"tool_outputs": [{"tool_call_id": "offline-call-1", "output": MARKER}]}
    assert (await act(client, auth, waited["run_id"], answer)).status_code == 200
    await wait_finished(client, auth, waited["run_id"])
    # One still waiting when the thread goes, and one queued behind it.
    pending = await create_run(
        client,
        auth,
        'call lookup {"word": "y"}',
        thread_id=thread,
        agent_id=await make_agent(tools=[LOOKUP]),
    )
    await wait_status(client, auth, pending["run_id"], "requires_action")
    queued = await create_run(client, auth, "later", thread_id=thread)
    async with db.transaction() as session:
        session.add(
            ThreadSummary(
                id=new_id("sum"), thread_id=thread, through_run_id=first["run_id"], text=MARKER
            )
        )
    kept = await create_run(client, auth, "another thread")
    await wait_finished(client, auth, kept["run_id"])
    kept_items = await all_messages(client, auth, kept["thread_id"])

    run_ids = await _run_ids(client, auth, thread)
    assert {first["run_id"], waited["run_id"], pending["run_id"], queued["run_id"]} == run_ids
    needles = {thread, MARKER, *run_ids}
    tables = {table for table, _row in await _leftovers(db, needles)}
    assert {"threads", "runs", "run_events", "artifacts", "run_actions"} <= tables
    assert {"thread_summaries", "webhook_deliveries"} <= tables

    response = await client.delete(f"{THREADS}/{thread}", headers=auth)
    assert response.status_code == 200, response.text
    assert response.json() == {"id": thread, "object": "thread", "deleted": True}

    assert await _leftovers(db, needles) == []
    for run_id in run_ids:
        assert (await client.get(f"{RUNS}/{run_id}", headers=auth)).status_code == 404
    assert (await client.get(f"{THREADS}/{thread}", headers=auth)).status_code == 404
    assert (await client.delete(f"{THREADS}/{thread}", headers=auth)).status_code == 404
    # Usage stays: the two finished runs and the two cancelled by the deletion.
    totals = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (totals["runs"], totals["completed"], totals["cancelled"]) == (5, 3, 2)
    # The account's other thread is whole.
    assert await all_messages(client, auth, kept["thread_id"]) == kept_items


async def _streams_long(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    for index in range(3000):
        yield f"a{index} "
        await asyncio.sleep(0.01)


async def _streams_a_while(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    for index in range(60):
        yield f"b{index} "
        await asyncio.sleep(0.01)


async def _until_event(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str, kind: str
) -> None:
    for _ in range(2000):
        if any(event["event"] == kind for event in await events_of(client, auth, run_id)):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {kind} event")


async def _assert_intact(client: httpx.AsyncClient, auth: dict[str, str], run_id: str) -> None:
    """The run completed with every event it streamed: sequence numbers dense from 1, all 60
    pieces of text in order, one terminal event last."""
    done = await wait_finished(client, auth, run_id, within=30)
    assert done["status"] == "completed", done
    events = await events_of(client, auth, run_id)
    assert [event["id"] for event in events] == list(range(1, len(events) + 1))
    text = "".join(e["data"]["text"] for e in events if e["event"] == "message.delta")
    assert text == "".join(f"b{index} " for index in range(60))
    assert done["result"] == text
    assert [e["event"] for e in events if e["event"].startswith("run.")][-1] == "run.completed"


async def test_deleting_a_thread_mid_stream_cancels_its_run_and_spares_others(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:long", FunctionModel(stream_function=_streams_long))
    models.register("test:while", FunctionModel(stream_function=_streams_a_while))
    doomed = await create_run(client, auth, "talk", agent_id=await make_agent(model="test:long"))
    other = await create_run(client, auth, "talk", agent_id=await make_agent(model="test:while"))
    await _until_event(client, auth, doomed["run_id"], "message.delta")
    await _until_event(client, auth, other["run_id"], "message.delta")

    response = await client.delete(f"{THREADS}/{doomed['thread_id']}", headers=auth)
    assert response.status_code == 200, response.text
    await _assert_intact(client, auth, other["run_id"])
    assert await _leftovers(db, {doomed["thread_id"], doomed["run_id"]}) == []
    # The cancelled run was counted, as billing must.
    totals = (await client.get("/v1/analytics/usage", headers=auth)).json()["totals"]
    assert (totals["completed"], totals["cancelled"]) == (1, 1)


async def test_rows_deleted_under_an_executing_run_break_nothing(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    """The rows go while the worker still streams the run (no cancel first: what a run stuck
    past the grace meets): its writes match nothing and stop it; the other run's events,
    written in the same batches, all commit."""
    models.register("test:long", FunctionModel(stream_function=_streams_long))
    models.register("test:while", FunctionModel(stream_function=_streams_a_while))
    doomed = await create_run(client, auth, "talk", agent_id=await make_agent(model="test:long"))
    other = await create_run(client, auth, "talk", agent_id=await make_agent(model="test:while"))
    await _until_event(client, auth, doomed["run_id"], "message.delta")
    await _until_event(client, auth, other["run_id"], "message.delta")

    deleted = await deletion.delete_threads(db, [doomed["thread_id"]])
    assert deleted.threads == 1
    assert deleted.counts["runs"] == 1 and deleted.counts["run_events"] >= 3

    await _assert_intact(client, auth, other["run_id"])
    await asyncio.sleep(0.3)  # the doomed run's worker wrote (and failed to write) since
    assert await _leftovers(db, {doomed["thread_id"], doomed["run_id"]}) == []
    # The worker let the run go: a new run starts and completes as usual.
    after = await create_run(client, auth, "still working")
    assert (await wait_finished(client, auth, after["run_id"]))["status"] == "completed"


async def test_runs_created_while_their_thread_is_deleted_are_404s_or_gone(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    """Creates racing a delete: each is a 201 (then deleted with the thread) or a 404 on
    `thread_id`, never a 500, and nothing of the thread is left."""
    thread = (await create_thread(client, auth))["id"]

    async def create() -> httpx.Response:
        body = {"prompt": "race", "thread_id": thread}
        return await client.post(RUNS, json=body, headers=auth)

    deleting = asyncio.create_task(client.delete(f"{THREADS}/{thread}", headers=auth))
    creates = []
    while not deleting.done():  # creates keep coming while the delete goes on
        creates.append(asyncio.create_task(create()))
        await asyncio.sleep(0.002)
    later = [asyncio.create_task(create()) for _ in range(5)]
    responses = await asyncio.gather(*creates, *later)
    assert (await deleting).status_code == 200
    assert {response.status_code for response in responses} <= {201, 404}, [
        response.text for response in responses if response.status_code not in {201, 404}
    ]
    for response in responses:
        if response.status_code == 404:
            assert response.json()["error"]["details"]["parameter"] == "thread_id"
    assert [response.status_code for response in responses[-5:]] == [404] * 5
    await asyncio.sleep(0.3)
    assert await _leftovers(db, {thread}) == []
