"""A run records the agent version it executes: the live one, `agt_…@3` (or `@v3`) or `agt_…@alias`
(an alias's split chosen per run), and analytics count usage per version."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from atrium.agents.versions.resolve import share_of
from tests.agents.versions.conftest import AGENTS, RUNS, edit, new_agent
from tests.runs.helpers import wait_finished

THREADS = "/api/v1/public/threads"


async def _create(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, prompt: str = "hello"
) -> httpx.Response:
    return await client.post(RUNS, json={"prompt": prompt, "agent_id": agent_id}, headers=auth)


async def _run(client: httpx.AsyncClient, auth: dict[str, str], agent_id: str) -> dict:
    response = await _create(client, auth, agent_id)
    assert response.status_code == 201, response.text
    run: dict = response.json()
    return run


async def test_a_run_records_the_live_version(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    assert (await _run(client, auth, agent_id))["agent_version"] == 1
    await edit(client, auth, agent_id, instructions="v2")
    run = await _run(client, auth, agent_id)
    assert run["agent_version"] == 2
    assert run["agent_id"] == agent_id
    fetched = await client.get(f"{RUNS}/{run['run_id']}", headers=auth)
    assert fetched.json()["agent_version"] == 2


async def test_the_default_agent_records_version_1(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(RUNS, json={"prompt": "hello"}, headers=auth)
    assert response.json()["agent_version"] == 1
    agent_id = response.json()["agent_id"]
    versions = await client.get(f"{AGENTS}/{agent_id}/versions", headers=auth)
    assert [v["version"] for v in versions.json()["data"]] == [1]


async def test_a_version_number_or_an_alias_runs_that_config(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth, instructions="Answer as version one.")
    await edit(client, auth, agent_id, instructions="Answer as version two.")
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json={"version": 1}, headers=auth)
    by_number = await _run(client, auth, f"{agent_id}@1")
    by_alias = await _run(client, auth, f"{agent_id}@prod")
    live = await _run(client, auth, agent_id)
    assert [by_number["agent_version"], by_alias["agent_version"], live["agent_version"]] == [
        1,
        1,
        2,
    ]
    assert by_alias["agent_id"] == agent_id
    finished = await wait_finished(client, auth, by_alias["run_id"])
    assert finished["status"] == "completed"
    # Moving the alias moves its runs; the runs made before keep their version.
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json={"version": 2}, headers=auth)
    assert (await _run(client, auth, f"{agent_id}@prod"))["agent_version"] == 2
    again = await client.get(f"{RUNS}/{by_alias['run_id']}", headers=auth)
    assert again.json()["agent_version"] == 1


async def _a_run_of_each_version(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> tuple[str, dict, dict]:
    """An agent edited once, a run of its version 1 (by `@1`) and one of the live version 2."""
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    first = await _run(client, auth, f"{agent_id}@1")
    second = await _run(client, auth, agent_id)
    return agent_id, first, second


async def test_the_runs_list_takes_a_version_as_agent_id(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id, first, second = await _a_run_of_each_version(client, auth)

    async def listed(**params: object) -> httpx.Response:
        return await client.get(RUNS, params=params, headers=auth)

    for reference, expected in ((f"{agent_id}@1", first), (f"{agent_id}@2", second)):
        found = await listed(agent_id=reference)
        assert found.status_code == 200, found.text
        assert [run["run_id"] for run in found.json()["data"]] == [expected["run_id"]]
    both = await listed(agent_id=f"{agent_id}@1", agent_version=1)
    assert [run["run_id"] for run in both.json()["data"]] == [first["run_id"]]
    # Runs record the version they executed, not an alias; a version and a different
    # agent_version contradict: no run, and no 400 for a request the document allows.
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json={"version": 1}, headers=auth)
    for params in (
        {"agent_id": f"{agent_id}@3"},
        {"agent_id": f"{agent_id}@prod"},
        {"agent_id": f"{agent_id}@"},
        {"agent_id": f"{agent_id}@1", "agent_version": 2},
    ):
        none = await listed(**params)
        assert none.status_code == 200, none.text
        assert none.json()["data"] == [], params


async def test_the_threads_list_takes_a_version_as_agent_id(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id, first, second = await _a_run_of_each_version(client, auth)
    assert first["thread_id"] != second["thread_id"]
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json={"version": 1}, headers=auth)

    async def thread_ids(agent: str) -> list[str]:
        found = await client.get(THREADS, params={"agent_id": agent}, headers=auth)
        assert found.status_code == 200, found.text
        return [thread["id"] for thread in found.json()["data"]]

    assert await thread_ids(f"{agent_id}@1") == [first["thread_id"]]
    assert await thread_ids(f"{agent_id}@v2") == [second["thread_id"]]
    assert await thread_ids(agent_id) == [second["thread_id"], first["thread_id"]]
    for nothing in (f"{agent_id}@3", f"{agent_id}@prod", f"{agent_id}@", "nonsense@1"):
        assert await thread_ids(nothing) == [], nothing


async def test_v_and_a_number_names_that_version(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """`agt_…@v1` is `agt_…@1`: its run executes version 1's config (a text answer, where
    version 2's output schema makes an object) and records 1, and the runs list takes it. `v0`
    and `v01` name no version: aliases, which this agent does not have."""
    agent_id = await new_agent(client, auth)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    await edit(client, auth, agent_id, output_schema=schema)
    first = await _run(client, auth, f"{agent_id}@v1")
    second = await _run(client, auth, f"{agent_id}@v2")
    assert [(r["agent_id"], r["agent_version"]) for r in (first, second)] == [
        (agent_id, 1),
        (agent_id, 2),
    ]
    done = [await wait_finished(client, auth, run["run_id"]) for run in (first, second)]
    assert [run["status"] for run in done] == ["completed", "completed"]
    assert isinstance(done[0]["result"], str) and "hello" in done[0]["result"], done[0]
    assert isinstance(done[1]["result"], dict), done[1]
    for reference, expected in ((f"{agent_id}@v1", [first]), (f"{agent_id}@v2", [second])):
        listed = await client.get(RUNS, params={"agent_id": reference}, headers=auth)
        assert [run["run_id"] for run in listed.json()["data"]] == [r["run_id"] for r in expected]
    for suffix, problem in (
        ("@v0", "no alias 'v0'"),
        ("@v01", "no alias 'v01'"),
        ("@v9", "no version 9"),
    ):
        response = await _create(client, auth, f"{agent_id}{suffix}")
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["details"]["parameter"] == "agent_id"
        assert problem in error["message"], error["message"]
        listed = await client.get(RUNS, params={"agent_id": f"{agent_id}{suffix}"}, headers=auth)
        assert listed.json()["data"] == [], suffix


@pytest.mark.parametrize(
    ("suffix", "status"),
    [("@9", 400), ("@canary", 400), ("@", 400), ("@Prod!", 400), ("@0", 400), ("@1@1", 400)],
)
async def test_unknown_versions_and_aliases_are_400_on_agent_id(
    client: httpx.AsyncClient, auth: dict[str, str], suffix: str, status: int
) -> None:
    agent_id = await new_agent(client, auth)
    response = await _create(client, auth, f"{agent_id}{suffix}")
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == "INVALID_PARAMETER"
    assert response.json()["error"]["details"]["parameter"] == "agent_id"
    listed = await client.get(RUNS, headers=auth)
    assert listed.json()["data"] == []  # no run made


async def test_an_unknown_agent_with_a_version_is_404(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for reference in ("agt_nope@1", "agt_nope@prod", "nonsense@1"):
        response = await _create(client, auth, reference)
        assert response.status_code == 404, reference
        assert response.json()["error"]["details"]["parameter"] == "agent_id"
    agent_id = await new_agent(client, auth)
    await client.delete(f"{AGENTS}/{agent_id}", headers=auth)
    assert (await _create(client, auth, f"{agent_id}@1")).status_code == 404


@pytest.mark.parametrize(
    "settings_overrides", [{"run_worker": False, "rate_limit_standard": "100000/hour"}]
)
async def test_an_80_20_split_over_1000_runs(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    alias = {"version": 1, "split": {"version": 2, "weight": 0.2}}
    await client.put(f"{AGENTS}/{agent_id}/aliases/prod", json=alias, headers=auth)
    semaphore = asyncio.Semaphore(50)

    async def one(index: int) -> dict:
        async with semaphore:
            return await _run(client, auth, f"{agent_id}@prod")

    runs = await asyncio.gather(*(one(index) for index in range(1000)))
    on_two = sum(run["agent_version"] == 2 for run in runs)
    # Binomial(1000, 0.2): standard deviation 12.6; 4.5 of them either side.
    assert 143 <= on_two <= 257, on_two
    # The choice is the run id's hash: anyone can check it.
    for run in runs:
        assert run["agent_version"] == (2 if share_of(run["run_id"]) < 0.2 else 1)


async def test_usage_by_version(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth)
    first = [await _run(client, auth, agent_id) for _ in range(2)]
    await edit(client, auth, agent_id, instructions="v2")
    second = [await _run(client, auth, agent_id) for _ in range(3)]
    finished = [await wait_finished(client, auth, run["run_id"]) for run in first + second]
    assert {run["status"] for run in finished} == {"completed"}
    response = await client.get("/v1/analytics/usage", params={"agent_id": agent_id}, headers=auth)
    assert response.status_code == 200, response.text
    report = response.json()
    versions = report["versions"]
    assert [(v["version"], v["runs"], v["completed"]) for v in versions] == [(2, 3, 3), (1, 2, 2)]
    for version, runs in ((2, finished[2:]), (1, finished[:2])):
        row = next(v for v in versions if v["version"] == version)
        assert row["input_tokens"] == sum(run["billing"]["input_tokens"] for run in runs)
    assert sum(v["runs"] for v in versions) == report["totals"]["runs"]
    everyone = await client.get("/v1/analytics/usage", headers=auth)
    assert everyone.json()["versions"] is None
