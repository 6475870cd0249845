"""Threads as resources: create, list (agent and metadata filters, pages), get with its status,
last run and counts; bad parameters, unknown and foreign threads."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.runtime.llm_models import ModelRegistry
from tests.conftest import KeyFactory, bearer
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, wait_status
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.threads.helpers import THREADS, create_thread, get_thread


async def _stalls(_messages: list[ModelMessage], _info: AgentInfo) -> AsyncIterator[str]:
    yield "thinking"
    await asyncio.sleep(60)
    yield " never"


async def test_a_created_thread_is_idle_and_empty(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await create_thread(client, auth, metadata={"user": "ada", "n": 1})
    assert created["id"].startswith("thr_")
    assert created["object"] == "thread"
    assert created["metadata"] == {"user": "ada", "n": 1}
    assert created["status"] == "idle"
    assert created["last_run"] is None
    assert created["counts"] == {"runs": 0, "messages": 0}
    assert created["forked_from"] is None
    assert await get_thread(client, auth, created["id"]) == created
    # No body at all is an empty thread too.
    bare = await client.post(THREADS, headers=auth)
    assert bare.status_code == 201, bare.text
    assert bare.json()["metadata"] == {}


async def test_a_run_continues_a_created_thread(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    thread = await create_thread(client, auth)
    run = await create_run(client, auth, "hello", thread_id=thread["id"])
    done = await wait_finished(client, auth, run["run_id"])
    assert "(turn 1)" in done["result"]
    shown = await get_thread(client, auth, thread["id"])
    assert shown["status"] == "idle"
    assert shown["last_run"] == {
        "id": run["run_id"],
        "status": "completed",
        "agent_id": run["agent_id"],
        "created_at": run["created_at"],
    }
    # A prompt, the artifact call, its result, the answer.
    assert shown["counts"] == {"runs": 1, "messages": 4}


async def test_status_follows_the_threads_runs(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    models.register("test:stalls", FunctionModel(stream_function=_stalls))
    busy = await create_run(client, auth, "talk", agent_id=await make_agent(model="test:stalls"))
    await wait_status(client, auth, busy["run_id"], "running")
    assert (await get_thread(client, auth, busy["thread_id"]))["status"] == "busy"
    # A run queued behind it keeps the thread busy too.
    queued = await create_run(client, auth, "next", thread_id=busy["thread_id"])
    assert (await get_thread(client, auth, busy["thread_id"]))["last_run"]["id"] == queued["run_id"]

    waiting = await create_run(
        client,
        auth,
        'call lookup {"word": "atrium"}',
        agent_id=await make_agent(tools=[LOOKUP]),
    )
    await wait_status(client, auth, waiting["run_id"], "requires_action")
    assert (await get_thread(client, auth, waiting["thread_id"]))["status"] == "requires_action"

    for run in (busy, queued, waiting):
        await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
    await wait_finished(client, auth, busy["run_id"])
    for run in (busy, waiting):
        shown = await get_thread(client, auth, run["thread_id"])
        assert shown["status"] == "idle"


async def test_the_list_pages_newest_first(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    made = [(await create_thread(client, auth, metadata={"i": str(i)}))["id"] for i in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await client.get(THREADS, params=params, headers=auth)).json()
        assert all(thread["counts"] is None for thread in page["data"])
        seen.extend(thread["id"] for thread in page["data"])
        if not page["has_more"]:
            break
        cursor = page["next_cursor"]
    assert seen == made[::-1]


async def test_the_list_filters_by_agent_and_metadata(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent = await make_agent()
    by_agent = await create_run(client, auth, "hi", agent_id=agent)
    ada = await create_thread(client, auth, metadata={"user": "ada", "team": "x"})
    await create_thread(client, auth, metadata={"user": "bob", "team": "x"})
    numeric = await create_thread(client, auth, metadata={"user": 5})

    async def listed(params: dict[str, str]) -> list[str]:
        response = await client.get(THREADS, params=params, headers=auth)
        assert response.status_code == 200, response.text
        return [thread["id"] for thread in response.json()["data"]]

    assert await listed({"agent_id": agent}) == [by_agent["thread_id"]]
    assert await listed({"agent_id": "agt_unknown"}) == []
    assert await listed({"metadata[user]": "ada"}) == [ada["id"]]
    assert await listed({"metadata[user]": "ada", "metadata[team]": "x"}) == [ada["id"]]
    assert await listed({"metadata[user]": "ada", "metadata[team]": "y"}) == []
    assert len(await listed({"metadata[team]": "x"})) == 2
    # String values only: a number is not its text.
    assert numeric["id"] not in await listed({"metadata[user]": "5"})


@pytest.mark.parametrize(
    ("query", "parameter"),
    [
        ("metadata=ada", "metadata"),
        ("metadata[]=ada", "metadata[]"),
        ("metadata[user]=a&metadata[user]=b", "metadata[user]"),
        ("metadatax[user]=a", "metadatax[user]"),
        ("cursor=nonsense", "cursor"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
    ],
)
async def test_bad_list_parameters_are_400s_naming_them(
    client: httpx.AsyncClient, auth: dict[str, str], query: str, parameter: str
) -> None:
    response = await client.get(f"{THREADS}?{query}", headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter


async def test_too_many_metadata_filters_are_a_400(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    query = "&".join(f"metadata[k{i}]=v" for i in range(9))
    response = await client.get(f"{THREADS}?{query}", headers=auth)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "metadata[k8]"


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"metadata": "x"}, "metadata"),
        ({"metadata": {"a": "\u0000"}}, "metadata"),
        ({"metadata": {"a": "x" * 5000}}, "metadata"),
        ({"title": "x"}, "title"),
    ],
)
async def test_bad_create_bodies_are_400s_and_store_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], body: object, parameter: str
) -> None:
    response = await client.post(THREADS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["parameter"] == parameter
    assert (await client.get(THREADS, headers=auth)).json()["data"] == []


async def test_unknown_and_foreign_threads_are_404s(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    mine = await create_thread(client, auth)
    other = bearer((await make_key()).key)
    for thread_id in (mine["id"], "thr_unknown", "not an id", "x" * 300):
        for method, suffix in (
            ("GET", ""),
            ("GET", "/messages"),
            ("POST", "/fork"),
            ("DELETE", ""),
        ):
            response = await client.request(method, f"{THREADS}/{thread_id}{suffix}", headers=other)
            assert response.status_code == 404, (method, suffix, response.text)
            error = response.json()["error"]
            assert error["code"] == "NOT_FOUND"
            assert error["details"]["parameter"] == "thread_id"
    assert (await client.get(THREADS, headers=other)).json()["data"] == []
    assert (await get_thread(client, auth, mine["id"]))["id"] == mine["id"]
