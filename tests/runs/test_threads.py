"""Threads: later runs see earlier messages; one run of a thread executes at a time."""

from __future__ import annotations

import asyncio
import itertools

import httpx

from tests.runs.helpers import create_run, wait_finished
from tests.statements import recorded


async def test_a_thread_carries_its_history(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    first = await create_run(client, auth, "first question")
    first_done = await wait_finished(client, auth, first["run_id"])
    assert "(turn 1)" in first_done["result"]
    second = await create_run(client, auth, "second question", thread_id=first["thread_id"])
    assert second["thread_id"] == first["thread_id"]
    second_done = await wait_finished(client, auth, second["run_id"])
    # The offline model counts the user prompts it was given: the history reached it.
    assert "(turn 2)" in second_done["result"]
    separate = await wait_finished(client, auth, (await create_run(client, auth))["run_id"])
    assert "(turn 1)" in separate["result"]


async def test_runs_of_one_thread_execute_one_at_a_time_in_order(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    first = await create_run(client, auth, "one")
    thread = first["thread_id"]
    others = [await create_run(client, auth, f"next {i}", thread_id=thread) for i in range(4)]
    runs = [first, *others]
    done = await asyncio.gather(*(wait_finished(client, auth, r["run_id"]) for r in runs))
    for earlier, later in itertools.pairwise(done):
        assert earlier["finished_at"] <= later["started_at"]
    assert [f"(turn {i + 1})" in run["result"] for i, run in enumerate(done)] == [True] * 5


async def test_a_run_of_its_own_thread_reads_no_history_and_no_endpoints(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """The claim's and the finish's UPDATEs say whether there is history or a webhook endpoint
    to read (most runs have neither): no statement of their own then."""
    with recorded() as statements:
        run = await create_run(client, auth, "alone")
        done = await wait_finished(client, auth, run["run_id"])
    seen = [statement.text for statement in statements]
    assert done["status"] == "completed"
    assert any("UPDATE threads" in sql for sql in seen)  # the claim was observed
    assert not [sql for sql in seen if sql.startswith("SELECT runs.messages")]
    assert not [sql for sql in seen if sql.startswith("SELECT webhook_endpoints")]
