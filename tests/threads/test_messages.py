"""`GET /threads/{id}/messages`: the conversation as the model sees it, paged; a summary stands
in for what it covers, both in the list and in what the next run is given."""

from __future__ import annotations

from datetime import timedelta

import httpx

from atrium.db.engine import Database
from atrium.db.models import Run, ThreadSummary
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, wait_status
from tests.runs.helpers import create_run, wait_finished
from tests.threads.helpers import THREADS, all_messages, get_thread


async def test_a_run_with_a_tool_call_reads_as_prompt_call_result_answer(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent = await make_agent(tools=[LOOKUP])
    run = await create_run(client, auth, 'call lookup {"word": "atrium"}', agent_id=agent)
    await wait_status(client, auth, run["run_id"], "requires_action")
    # A waiting run is not in the history yet.
    assert await all_messages(client, auth, run["thread_id"]) == []
    call_id = "offline-call-1"
    answered = await act(
        client,
        auth,
        run["run_id"],
        {"tool_outputs": [{"tool_call_id": call_id, "output": "a hall"}]},
    )
    assert answered.status_code == 200, answered.text
    await wait_finished(client, auth, run["run_id"])

    items = await all_messages(client, auth, run["thread_id"])
    assert [item["role"] for item in items] == ["user", "assistant", "tool", "assistant"]
    prompt, call, result, answer = items
    assert prompt["content"] == 'call lookup {"word": "atrium"}'
    assert call["tool_calls"] == [
        {"id": call_id, "name": "lookup", "arguments": {"word": "atrium"}}
    ]
    assert call["content"] is None
    assert result == {
        "id": result["id"],
        "object": "thread.message",
        "run_id": run["run_id"],
        "role": "tool",
        "content": "a hall",
        "tool_call_id": call_id,
        "name": "lookup",
        "is_error": False,
        "compacted": False,
        "created_at": result["created_at"],
    }
    assert "lookup returned: a hall" in answer["content"]
    assert "tool_calls" not in answer and "tool_call_id" not in prompt
    assert all(item["run_id"] == run["run_id"] and not item["compacted"] for item in items)
    assert len({item["id"] for item in items}) == 4
    assert (await get_thread(client, auth, run["thread_id"]))["counts"]["messages"] == 4


async def test_pages_of_one_item_walk_the_whole_conversation(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    first = await create_run(client, auth, "one")
    await wait_finished(client, auth, first["run_id"])
    second = await create_run(client, auth, "two", thread_id=first["thread_id"])
    await wait_finished(client, auth, second["run_id"])
    whole = await all_messages(client, auth, first["thread_id"])
    assert [item["run_id"] for item in whole] == [first["run_id"]] * 4 + [second["run_id"]] * 4
    assert [item["content"] for item in whole if item["role"] == "user"] == ["one", "two"]
    assert await all_messages(client, auth, first["thread_id"], limit=1) == whole
    assert await all_messages(client, auth, first["thread_id"], limit=3) == whole


async def test_a_summary_stands_in_for_what_it_covers(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database
) -> None:
    """A summary row as compaction writes it: the list places it after the last run it covers
    and marks the originals; the next run is given the summary instead of them."""
    runs = []
    thread_id = None
    for prompt in ("one", "two", "three"):
        run = await create_run(
            client, auth, prompt, **({"thread_id": thread_id} if thread_id else {})
        )
        thread_id = run["thread_id"]
        runs.append(await wait_finished(client, auth, run["run_id"]))
    assert thread_id is not None
    async with db.transaction() as session:
        second = await session.get(Run, runs[1]["run_id"])
        assert second is not None
        for text, through in (("older summary", runs[0]["run_id"]), ("the gist", second.id)):
            session.add(
                ThreadSummary(
                    id=new_id("sum"),
                    thread_id=thread_id,
                    through_run_id=through,
                    text=text,
                    created_at=utcnow() - timedelta(seconds=1 if text == "older summary" else 0),
                )
            )

    items = await all_messages(client, auth, thread_id)
    summaries = [item for item in items if item["role"] == "summary"]
    assert [(s["content"], s["run_id"], s["compacted"]) for s in summaries] == [
        ("older summary", runs[0]["run_id"], True),
        ("the gist", runs[1]["run_id"], False),
    ]
    # Each summary follows the last item of the run it covers through.
    roles = [(item["role"], item["run_id"]) for item in items]
    assert roles.index(("summary", runs[0]["run_id"])) == 4
    assert roles.index(("summary", runs[1]["run_id"])) == 9
    covered = [item for item in items if item["run_id"] in {runs[0]["run_id"], runs[1]["run_id"]}]
    assert all(item["compacted"] for item in covered if item["role"] != "summary")
    assert not any(item["compacted"] for item in items if item["run_id"] == runs[2]["run_id"])
    assert await all_messages(client, auth, thread_id, limit=1) == items
    assert (await get_thread(client, auth, thread_id))["counts"]["messages"] == 14

    # The model is given the summary (one user message) and the third run, not runs one and two.
    fourth = await create_run(client, auth, "four", thread_id=thread_id)
    done = await wait_finished(client, auth, fourth["run_id"])
    assert "(turn 3)" in done["result"], done["result"]


async def test_bad_messages_parameters_are_400s(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth, "one")
    await wait_finished(client, auth, run["run_id"])
    for query, parameter in (
        ("cursor=1.2.3", "cursor"),
        ("cursor=0.0.-.x", "cursor"),
        ("limit=0", "limit"),
        ("limit=abc", "limit"),
    ):
        response = await client.get(f"{THREADS}/{run['thread_id']}/messages?{query}", headers=auth)
        assert response.status_code == 400, (query, response.text)
        assert response.json()["error"]["details"]["parameter"] == parameter
