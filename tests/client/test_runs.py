"""Runs through the client: create, get, list, wait, stream, cancel, artifacts."""

from __future__ import annotations

import hashlib
import secrets
import time
from pathlib import Path

import pytest

from atrium.client import (
    ArtifactCreated,
    AsyncClient,
    Client,
    ConflictError,
    MessageDelta,
    NotFoundError,
    RunCancelled,
    RunCompleted,
    RunQueued,
    RunStarted,
    RunStep,
    WaitTimeoutError,
)
from tests.client.conftest import SLOW_WORDS


def test_create_wait_and_download_artifacts(atrium: Client, tmp_path: Path) -> None:
    created = atrium.runs.create("Plan a picnic", metadata={"ticket": 7})
    assert created.run_id.startswith("run_") and created.thread_id.startswith("thr_")
    assert created.status in ("queued", "running", "completed")
    assert created.metadata == {"ticket": 7}
    assert created.events_url.endswith(f"/agent/runs/{created.run_id}/events")

    finished = atrium.runs.wait(created.run_id, timeout=30)
    assert finished.status == "completed" and finished.finished
    assert finished.result and "Plan a picnic" in finished.result
    assert finished.billing is not None and finished.billing.credits > 0
    assert finished.artifacts is not None and len(finished.artifacts) == 1
    artifact = finished.artifacts[0]
    assert atrium.runs.artifacts(created.run_id) == finished.artifacts

    content = atrium.runs.artifact_content(created.run_id, artifact.artifact_id)
    assert hashlib.sha256(content).hexdigest() == artifact.sha256
    assert len(content) == artifact.size_bytes

    paths = atrium.runs.download_artifacts(created.run_id, to=tmp_path / "out")
    assert paths == [tmp_path / "out" / artifact.name]
    assert paths[0].read_bytes() == content
    assert not list((tmp_path / "out").glob("*.part"))


def test_stream_yields_typed_events_once_in_order(atrium: Client) -> None:
    created = atrium.runs.create("Stream me")
    events = list(atrium.runs.stream(created.run_id))
    assert [event.id for event in events] == list(range(1, len(events) + 1))
    assert isinstance(events[0], RunQueued)
    assert isinstance(events[1], RunStarted)
    assert any(isinstance(event, RunStep) and event.step == "model_request" for event in events)
    artifact_events = [event for event in events if isinstance(event, ArtifactCreated)]
    assert [event.name for event in artifact_events] == ["answer.md"]
    final = events[-1]
    assert isinstance(final, RunCompleted) and final.terminal
    assert final.billing is not None and final.billing.credits > 0
    text = "".join(event.text for event in events if isinstance(event, MessageDelta))
    assert text == final.result == atrium.runs.get(created.run_id).result

    after = list(atrium.runs.stream(created.run_id, last_event_id=3))
    assert [event.id for event in after] == [event.id for event in events[3:]]
    assert [event.id for event in atrium.runs.events(created.run_id)] == [e.id for e in events]


async def test_async_stream_follows_a_live_run(async_atrium: AsyncClient, slow_agent: str) -> None:
    created = await async_atrium.runs.create("Take your time", agent_id=slow_agent)
    assert created.agent_id == slow_agent
    events = [event async for event in async_atrium.runs.stream(created.run_id)]
    assert [event.id for event in events] == list(range(1, len(events) + 1))
    text = "".join(event.text for event in events if isinstance(event, MessageDelta))
    assert text == " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))
    assert sum(isinstance(event, MessageDelta) for event in events) > 1, "text arrives in parts"
    assert isinstance(events[-1], RunCompleted)


def test_idempotency_key_returns_the_same_run(atrium: Client) -> None:
    key = secrets.token_hex(8)
    first = atrium.runs.create("Only once", idempotency_key=key)
    again = atrium.runs.create("Only once", idempotency_key=key)
    assert again.run_id == first.run_id
    with pytest.raises(ConflictError) as caught:
        atrium.runs.create("Something else", idempotency_key=key)
    assert caught.value.status_code == 409


def test_list_and_iterate_runs(atrium: Client) -> None:
    made = [atrium.runs.create(f"run {i}").run_id for i in range(5)]
    page = atrium.runs.list(limit=2)
    assert [run.run_id for run in page.data] == made[::-1][:2], "newest first"
    assert page.has_more and page.next_cursor
    assert [run.run_id for run in atrium.runs.iter_all(limit=2)] == made[::-1]

    thread = atrium.runs.get(made[0]).thread_id
    assert [run.run_id for run in atrium.runs.iter_all(thread_id=thread)] == [made[0]]
    for run_id in made:
        atrium.runs.wait(run_id, timeout=30)
    assert {run.run_id for run in atrium.runs.iter_all(status="completed")} == set(made)


def test_cancel_a_running_run(atrium: Client, slow_agent: str) -> None:
    created = atrium.runs.create("Never mind", agent_id=slow_agent)
    stream = atrium.runs.stream(created.run_id)
    for event in stream:
        if isinstance(event, MessageDelta):
            break
    cancelled = atrium.runs.cancel(created.run_id)
    assert cancelled.run_id == created.run_id
    rest = list(stream)
    assert isinstance(rest[-1], RunCancelled)
    finished = atrium.runs.get(created.run_id)
    assert finished.status == "cancelled" and finished.billing is not None

    with pytest.raises(ConflictError) as caught:
        atrium.runs.cancel(created.run_id)
    assert caught.value.code == "CONFLICT"


def test_wait_times_out(atrium: Client, slow_agent: str) -> None:
    created = atrium.runs.create("Too slow", agent_id=slow_agent)
    started = time.monotonic()
    with pytest.raises(WaitTimeoutError) as caught:
        atrium.runs.wait(created.run_id, timeout=0.5)
    assert caught.value.run_id == created.run_id
    assert caught.value.waited is not None and 0.5 <= caught.value.waited < 5
    assert f"after waiting {caught.value.waited:.1f} s" in str(caught.value)
    assert time.monotonic() - started < 5
    atrium.runs.cancel(created.run_id)


def test_unknown_run_is_not_found(atrium: Client) -> None:
    with pytest.raises(NotFoundError) as caught:
        atrium.runs.get("run_doesnotexist")
    assert caught.value.parameter == "run_id"
    with pytest.raises(NotFoundError):
        list(atrium.runs.stream("run_doesnotexist"))
