"""`POST /threads/{id}/fork`: a new thread from the original's history up to a run; both
branches go on with their own history, the original untouched."""

from __future__ import annotations

from typing import Any

import httpx

from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.threads.helpers import THREADS, all_messages, create_thread, get_thread


async def _ran(
    client: httpx.AsyncClient, auth: dict[str, str], prompt: str, thread_id: str | None = None
) -> dict[str, Any]:
    extra = {"thread_id": thread_id} if thread_id else {}
    run = await create_run(client, auth, prompt, **extra)
    return await wait_finished(client, auth, run["run_id"])


async def _fork(
    client: httpx.AsyncClient, auth: dict[str, str], thread_id: str, **body: Any
) -> httpx.Response:
    return await client.post(f"{THREADS}/{thread_id}/fork", json=body, headers=auth)


async def test_both_branches_continue_with_their_own_history(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    first = await _ran(client, auth, "one")
    thread = first["thread_id"]
    second = await _ran(client, auth, "two", thread)
    before = await all_messages(client, auth, thread)

    response = await _fork(client, auth, thread, at_run_id=first["run_id"])
    assert response.status_code == 201, response.text
    fork = response.json()
    assert fork["id"] != thread
    assert fork["forked_from"] == {"thread_id": thread, "run_id": first["run_id"]}
    assert fork["status"] == "idle"
    assert fork["last_run"] is None
    assert fork["counts"] == {"runs": 0, "messages": 4}
    # The fork lists the copied messages as its base (no run of its own added them).
    base = await all_messages(client, auth, fork["id"])
    assert [item["content"] for item in base] == [item["content"] for item in before[:4]]
    assert all(item["run_id"] is None for item in base)

    on_fork = await _ran(client, auth, "fork two", fork["id"])
    on_original = await _ran(client, auth, "three", thread)
    # The fork saw "one" only; the original "one" and "two".
    assert "(turn 2) to: fork two" in on_fork["result"]
    assert "(turn 3) to: three" in on_original["result"]
    original = await all_messages(client, auth, thread)
    assert original[:8] == before
    assert [item["content"] for item in original if item["role"] == "user"] == [
        "one",
        "two",
        "three",
    ]
    forked = await all_messages(client, auth, fork["id"])
    assert [item["content"] for item in forked if item["role"] == "user"] == ["one", "fork two"]
    assert second["run_id"] not in {item["run_id"] for item in forked}

    # A fork of the fork, at its latest run by default, carries the whole branch.
    again = (await _fork(client, auth, fork["id"])).json()
    assert again["forked_from"] == {"thread_id": fork["id"], "run_id": on_fork["run_id"]}
    assert "(turn 3)" in (await _ran(client, auth, "deeper", again["id"]))["result"]


async def test_a_fork_defaults_to_the_last_run_and_copies_metadata(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    thread = await create_thread(client, auth, metadata={"user": "ada"})
    ran = await _ran(client, auth, "one", thread["id"])
    fork = (await _fork(client, auth, thread["id"])).json()
    assert fork["forked_from"] == {"thread_id": thread["id"], "run_id": ran["run_id"]}
    assert fork["metadata"] == {"user": "ada"}
    renamed = (await _fork(client, auth, thread["id"], metadata={"user": "bob"})).json()
    assert renamed["metadata"] == {"user": "bob"}
    assert (await get_thread(client, auth, thread["id"]))["metadata"] == {"user": "ada"}
    # An empty thread forks into an empty thread.
    empty = await create_thread(client, auth)
    bare = (await _fork(client, auth, empty["id"])).json()
    assert bare["forked_from"] == {"thread_id": empty["id"], "run_id": None}
    assert "(turn 1)" in (await _ran(client, auth, "first", bare["id"]))["result"]


async def test_a_fork_point_outside_the_history_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    ran = await _ran(client, auth, "one")
    thread = ran["thread_id"]
    elsewhere = await _ran(client, auth, "elsewhere")
    queued = await create_run(client, auth, "later", thread_id=thread)
    await client.post(f"{RUNS}/{queued['run_id']}/cancel", headers=auth)
    cancelled = await wait_finished(client, auth, queued["run_id"])
    assert cancelled["status"] == "cancelled"
    for at_run_id in (elsewhere["run_id"], cancelled["run_id"], "run_unknown", "not an id!"):
        response = await _fork(client, auth, thread, at_run_id=at_run_id)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["parameter"] == "at_run_id"
    for body, parameter in (({"at_run_id": 5}, "at_run_id"), ({"from": "x"}, "from")):
        response = await _fork(client, auth, thread, **body)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["parameter"] == parameter
    # Nothing was made.
    listed = (await client.get(THREADS, headers=auth)).json()["data"]
    assert sorted(t["id"] for t in listed) == sorted([thread, elsewhere["thread_id"]])
