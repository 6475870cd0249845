"""The SSE stream of a run: ids, kinds, replay, Last-Event-ID resume, live follow, JSON form."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.runs.helpers import RUNS, create_run, read_stream, wait_finished

KINDS = {
    "run.queued",
    "run.started",
    "run.step",
    "message.delta",
    "artifact.created",
    "tool.called",
    "tool.returned",
    "run.completed",
    "run.failed",
    "run.cancelled",
}


async def test_stream_replays_a_finished_run_and_ends(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth, "stream me")
    done = await wait_finished(client, auth, run["run_id"])
    frames = await read_stream(client, auth, run["run_id"])
    ids = [frame["id"] for frame in frames]
    assert ids == list(range(1, len(frames) + 1))  # dense per-run sequence from 1
    kinds = [frame["event"] for frame in frames]
    assert set(kinds) <= KINDS
    assert kinds[0] == "run.queued" and kinds[1] == "run.started"
    assert kinds[-1] == "run.completed"
    assert "artifact.created" in kinds
    steps = [frame["data"]["step"] for frame in frames if frame["event"] == "run.step"]
    assert steps[0] == "model_request" and "tool_call" in steps
    text = "".join(f["data"]["text"] for f in frames if f["event"] == "message.delta")
    assert text == done["result"]
    final = frames[-1]["data"]
    assert final["result"] == done["result"] and final["billing"] == done["billing"]
    assert all(frame["data"]["run_id"] == run["run_id"] for frame in frames)


async def test_resume_after_last_event_id_sends_only_the_rest(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    everything = await read_stream(client, auth, run["run_id"])
    first_part = await read_stream(client, auth, run["run_id"], stop_after=3)
    assert first_part == everything[:3]
    rest = await read_stream(client, auth, run["run_id"], last_event_id=first_part[-1]["id"])
    assert first_part + rest == everything


async def test_live_stream_follows_a_run_from_the_queue_to_its_end(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth, "live")
    frames = await asyncio.wait_for(read_stream(client, auth, run["run_id"]), 20)
    assert frames[0]["event"] == "run.queued"
    assert frames[-1]["event"] == "run.completed"
    assert [f["id"] for f in frames] == list(range(1, len(frames) + 1))


async def test_json_form_lists_the_events_so_far(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    response = await client.get(
        f"{RUNS}/{run['run_id']}/events", headers={**auth, "Accept": "application/json"}
    )
    assert response.status_code == 200
    events = response.json()["data"]
    streamed = await read_stream(client, auth, run["run_id"])
    assert [(e["id"], e["event"], e["data"]) for e in events] == [
        (f["id"], f["event"], f["data"]) for f in streamed
    ]
    after = await client.get(
        f"{RUNS}/{run['run_id']}/events",
        headers={**auth, "Accept": "application/json", "Last-Event-ID": "2"},
    )
    assert [e["id"] for e in after.json()["data"]] == [e["id"] for e in events[2:]]


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
async def test_bad_last_event_id_is_400(
    client: httpx.AsyncClient, auth: dict[str, str], value: str
) -> None:
    run = await create_run(client, auth)
    response = await client.get(
        f"{RUNS}/{run['run_id']}/events", headers={**auth, "Last-Event-ID": value}
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "Last-Event-ID"


async def test_unknown_run_stream_is_404(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.get(f"{RUNS}/run_nope/events", headers=auth)
    assert response.status_code == 404
