"""Listing runs: newest first, filters, cursor pagination, bad parameters."""

from __future__ import annotations

import httpx
import pytest

from tests.runs.helpers import RUNS, create_run, wait_finished


async def test_list_pages_newest_first_with_a_cursor(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = [(await create_run(client, auth, f"run {i}"))["run_id"] for i in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": "2", **({"cursor": cursor} if cursor else {})}
        page = (await client.get(RUNS, params=params, headers=auth)).json()
        seen += [run["run_id"] for run in page["data"]]
        assert len(page["data"]) <= 2
        if not page["has_more"]:
            assert page["next_cursor"] is None
            break
        cursor = page["next_cursor"]
    assert seen == list(reversed(created))


async def test_list_filters_by_status_agent_and_thread(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: object
) -> None:
    agent_id = await make_agent(model="atrium:offline")  # type: ignore[operator]
    first = await create_run(client, auth, "a", agent_id=agent_id)
    await wait_finished(client, auth, first["run_id"])
    second = await create_run(client, auth, "b", thread_id=first["thread_id"])
    other = await create_run(client, auth, "c")
    for run in (second, other):
        await wait_finished(client, auth, run["run_id"])

    async def ids(**params: str) -> list[str]:
        response = await client.get(RUNS, params=params, headers=auth)
        assert response.status_code == 200
        return [run["run_id"] for run in response.json()["data"]]

    assert await ids(agent_id=agent_id) == [first["run_id"]]
    assert await ids(thread_id=first["thread_id"]) == [second["run_id"], first["run_id"]]
    assert len(await ids(status="completed")) == 3
    assert await ids(status="queued") == []
    listed = (await client.get(RUNS, headers=auth)).json()["data"]
    assert all("billing" in run for run in listed)  # finished runs show their outcome


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"status": "done"}, "status"),
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
    ],
)
async def test_bad_list_parameters_are_400(
    client: httpx.AsyncClient, auth: dict[str, str], params: dict[str, str], parameter: str
) -> None:
    response = await client.get(RUNS, params=params, headers=auth)
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == parameter
