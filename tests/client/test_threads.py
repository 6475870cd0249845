"""`client.threads` (sync and async) against a real server with the offline model: a thread
made with metadata, its runs, its conversation page by page, a fork that goes on by itself,
deletion, and the 400s that name their parameter."""

from __future__ import annotations

import pytest

from atrium.client import AsyncClient, Client, ConflictError, InvalidParameterError, NotFoundError


def _answer(atrium: Client, prompt: str, thread_id: str) -> str:
    run = atrium.runs.create(prompt, thread_id=thread_id)
    done = atrium.runs.wait(run.run_id, timeout=60)
    assert done.status == "completed", done
    return done.run_id


def test_threads_sync(atrium: Client) -> None:
    thread = atrium.threads.create(metadata={"customer": "acme", "tier": 2})
    assert thread.id.startswith("thr_") and thread.status == "idle"
    assert thread.counts is not None and (thread.counts.runs, thread.counts.messages) == (0, 0)
    other = atrium.threads.create(metadata={"customer": "globex"})
    first = _answer(atrium, "Name a colour", thread.id)
    second = _answer(atrium, "Name a fruit of that colour", thread.id)

    listed = atrium.threads.list(metadata={"customer": "acme"})
    assert [item.id for item in listed.data] == [thread.id] and not listed.has_more
    assert listed.data[0].counts is None, "lists leave counts out"
    assert [item.id for item in atrium.threads.iter_all(limit=1)] == [other.id, thread.id]

    found = atrium.threads.get(thread.id)
    assert found.metadata == {"customer": "acme", "tier": 2}
    assert found.last_run is not None and found.last_run.id == second
    assert found.counts is not None and found.counts.runs == 2

    items = list(atrium.threads.iter_messages(thread.id, limit=3))
    assert len(items) == found.counts.messages == 8
    assert [item.role for item in items[:4]] == ["user", "assistant", "tool", "assistant"]
    assert items[0].content == "Name a colour" and items[0].run_id == first
    (call,) = items[1].tool_calls or []
    assert call.name == "write_artifact" and items[2].tool_call_id == call.id
    assert items[2].name == "write_artifact" and items[2].is_error is False
    assert items[-1].content.startswith("Offline answer (turn 2)")
    page = atrium.threads.messages(thread.id, limit=5)
    assert page.has_more and page.data == items[:5]
    rest = atrium.threads.messages(thread.id, cursor=page.next_cursor)
    assert not rest.has_more and rest.data == items[5:]

    fork = atrium.threads.fork(thread.id, at_run_id=first, metadata={"branch": "b"})
    assert fork.forked_from is not None
    assert (fork.forked_from.thread_id, fork.forked_from.run_id) == (thread.id, first)
    assert fork.metadata == {"branch": "b"} and fork.counts is not None
    assert fork.counts.messages == 4
    branch = _answer(atrium, "Name a vegetable of that colour", fork.id)
    assert atrium.runs.get(branch).result == (
        "Offline answer (turn 2) to: Name a vegetable of that colour. I wrote answer.md."
    )
    assert atrium.threads.get(thread.id).counts == found.counts, "the original is untouched"

    with pytest.raises(InvalidParameterError) as refused:
        atrium.threads.fork(thread.id, at_run_id="run_not-in-this-thread")
    assert refused.value.parameter == "at_run_id"
    with pytest.raises(InvalidParameterError) as malformed:
        atrium.threads.list(metadata={"no!": "x"})
    assert malformed.value.parameter == "metadata[no!]"

    deleted = atrium.threads.delete(fork.id)
    assert (deleted.id, deleted.deleted) == (fork.id, True)
    with pytest.raises(NotFoundError):
        atrium.threads.get(fork.id)
    with pytest.raises(NotFoundError):
        atrium.runs.get(branch)


async def test_threads_async(async_atrium: AsyncClient) -> None:
    thread = await async_atrium.threads.create()
    assert thread.metadata == {} and thread.last_run is None
    run = await async_atrium.runs.create("Name a river", thread_id=thread.id)
    assert (await async_atrium.runs.wait(run.run_id, timeout=60)).status == "completed"
    page = await async_atrium.threads.list()
    assert [item.id for item in page.data] == [thread.id]
    assert [item.id async for item in async_atrium.threads.iter_all()] == [thread.id]
    items = [item async for item in async_atrium.threads.iter_messages(thread.id, limit=2)]
    assert [item.role for item in items] == ["user", "assistant", "tool", "assistant"]
    assert items == (await async_atrium.threads.messages(thread.id)).data
    fork = await async_atrium.threads.fork(thread.id)
    assert fork.forked_from is not None and fork.forked_from.run_id == run.run_id
    assert (await async_atrium.threads.delete(thread.id)).deleted is True
    # The fork keeps its own copy of the history; its origin is named still.
    kept = await async_atrium.threads.get(fork.id)
    assert kept.counts is not None and kept.counts.messages == 4
    with pytest.raises(NotFoundError):
        await async_atrium.threads.messages(thread.id)


def test_compact_a_thread(atrium: Client, slow_agent: str) -> None:
    thread = atrium.threads.create()
    runs = [_answer(atrium, f"Prompt {word}", thread.id) for word in ("one", "two", "three")]
    done = atrium.threads.compact(thread.id)
    assert done.compacted and done.thread_id == thread.id
    assert done.through_run_id == runs[1], "the newest run stays as it is"
    assert done.text is not None and "Prompt one" in done.text and "Prompt two" in done.text
    assert done.billing is not None and done.billing.credits > 0

    items = list(atrium.threads.iter_messages(thread.id))
    (summary,) = [item for item in items if item.role == "summary"]
    # An item's id is `<source>.<n>`: the summary's is its own id and 0.
    assert summary.id == f"{done.summary_id}.0"
    assert (summary.run_id, summary.content) == (runs[1], done.text)
    at = items.index(summary)
    assert at == 8 and all(item.compacted for item in items[:at])
    assert not any(item.compacted for item in items[at:])
    assert atrium.threads.compact(thread.id).compacted is False, "nothing older left"
    # The next run is given the summary and the newest run: turn 3 of what it sees.
    assert atrium.runs.get(_answer(atrium, "Prompt four", thread.id)).result == (
        "Offline answer (turn 3) to: Prompt four. I wrote answer.md."
    )

    busy = atrium.runs.create("Take your time", agent_id=slow_agent, thread_id=thread.id)
    with pytest.raises(ConflictError) as refused:
        atrium.threads.compact(thread.id)
    assert refused.value.code == "THREAD_BUSY"
    atrium.runs.cancel(busy.run_id)
