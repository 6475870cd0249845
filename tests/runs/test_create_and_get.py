"""Creating a run and reading it back: fields, URLs, validation, idempotency, accounts."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import RUNS, create_run, wait_finished

RUN_FIELDS = {
    "run_id",
    "thread_id",
    "agent_id",
    "status",
    "prompt",
    "model",
    "created_at",
    "started_at",
    "finished_at",
    "status_url",
    "events_url",
    "artifacts_url",
    "metadata",
    "agent_version",
}


async def test_create_returns_the_run_and_its_polling_urls(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        RUNS, json={"prompt": "Summarise atrium", "metadata": {"ticket": 42}}, headers=auth
    )
    assert response.status_code == 201
    run = response.json()
    assert set(run) == RUN_FIELDS  # nothing of the outcome before the run is finished
    assert run["run_id"].startswith("run_")
    assert run["thread_id"].startswith("thr_")
    assert run["agent_id"].startswith("agt_")
    assert run["status"] in {"queued", "running"}
    assert run["metadata"] == {"ticket": 42}
    base = f"http://127.0.0.1:8000/api/v1/public/agent/runs/{run['run_id']}"
    assert run["status_url"] == base
    assert run["events_url"] == base + "/events"
    assert run["artifacts_url"] == base + "/artifacts"
    assert run["created_at"].endswith("Z")


async def test_a_completed_run_carries_result_artifacts_and_billing(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth, "Write a haiku about queues")
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed"
    assert set(done) == RUN_FIELDS | {"result", "artifacts", "billing"}
    assert "Write a haiku about queues" in done["result"]
    assert done["started_at"] is not None and done["finished_at"] is not None
    assert done["created_at"] <= done["started_at"] <= done["finished_at"]
    [artifact] = done["artifacts"]
    assert artifact["name"] == "answer.md"
    assert artifact["mime_type"] == "text/markdown"
    billing = done["billing"]
    assert set(billing) == {"credits", "input_tokens", "output_tokens", "requests", "tool_calls"}
    assert billing["requests"] == 2 and billing["tool_calls"] == 1
    assert billing["input_tokens"] > 0 and billing["output_tokens"] > 0
    assert billing["credits"] > 0
    # Field names only: a random id may spell "usd" or "cost".
    names = " ".join(_field_names(done)).lower()
    assert "cost" not in names and "usd" not in names


def _field_names(value: object) -> list[str]:
    """Every key of a JSON document, at any depth."""
    if isinstance(value, dict):
        return [str(k) for k in value] + [n for v in value.values() for n in _field_names(v)]
    if isinstance(value, list):
        return [n for v in value for n in _field_names(v)]
    return []


async def test_the_same_run_reads_the_same_later(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth)
    done = await wait_finished(client, auth, run["run_id"])
    again = (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()
    assert again == done


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({}, "prompt"),
        ({"prompt": ""}, "prompt"),
        ({"prompt": "   \n\t"}, "prompt"),
        ({"prompt": 42}, "prompt"),
        ({"prompt": None}, "prompt"),
        ({"prompt": "x" * 32_001}, "prompt"),
        ({"prompt": "hi", "metadata": "not an object"}, "metadata"),
        ({"prompt": "hi", "metadata": {"blob": "x" * 5000}}, "metadata"),
        ({"prompt": "hi", "agent_id": 7}, "agent_id"),
        ([1, 2], "body"),
    ],
)
async def test_bad_bodies_are_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], body: object, parameter: str
) -> None:
    response = await client.post(RUNS, json=body, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter
    listed = (await client.get(RUNS, headers=auth)).json()
    assert listed["data"] == []  # nothing half-written


async def test_malformed_json_is_400_on_body(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        RUNS, content=b'{"prompt": ', headers={**auth, "Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "body"


async def test_form_bodies_are_415(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.post(RUNS, data={"prompt": "hi"}, headers=auth)
    assert response.status_code == 415


async def test_unknown_agent_and_thread_are_404_naming_them(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(RUNS, json={"prompt": "hi", "agent_id": "agt_nope"}, headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["details"]["parameter"] == "agent_id"
    response = await client.post(RUNS, json={"prompt": "hi", "thread_id": "thr_nope"}, headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["details"]["parameter"] == "thread_id"


async def test_runs_of_another_account_are_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    run = await create_run(client, auth)
    other = bearer((await make_key()).key)
    for path in ("", "/events", "/artifacts"):
        response = await client.get(f"{RUNS}/{run['run_id']}{path}", headers=other)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "NOT_FOUND"
    cancel = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=other)
    assert cancel.status_code == 404
    foreign_thread = await client.post(
        RUNS, json={"prompt": "hi", "thread_id": run["thread_id"]}, headers=other
    )
    assert foreign_thread.status_code == 404
    assert (await client.get(RUNS, headers=other)).json()["data"] == []


async def test_unknown_run_is_404(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    response = await client.get(f"{RUNS}/run_doesnotexist", headers=auth)
    assert response.status_code == 404
    assert response.json()["error"]["details"] == {"parameter": "run_id"}


async def test_runs_need_a_key(client: httpx.AsyncClient) -> None:
    response = await client.post(RUNS, json={"prompt": "hi"})
    assert response.status_code == 401
    assert "x-ratelimit-limit" in response.headers


async def test_idempotency_key_returns_the_same_run(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    headers = {**auth, "Idempotency-Key": "order-7"}
    first = await client.post(RUNS, json={"prompt": "once"}, headers=headers)
    second = await client.post(RUNS, json={"prompt": "once"}, headers=headers)
    assert first.status_code == second.status_code == 201
    assert second.json()["run_id"] == first.json()["run_id"]
    assert second.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    conflict = await client.post(RUNS, json={"prompt": "another"}, headers=headers)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["code"] == "CONFLICT"
    listed = (await client.get(RUNS, headers=auth)).json()["data"]
    assert [run["run_id"] for run in listed] == [first.json()["run_id"]]


async def test_idempotency_keys_are_per_account(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    other = bearer((await make_key()).key)
    mine = await client.post(RUNS, json={"prompt": "x"}, headers={**auth, "Idempotency-Key": "k"})
    theirs = await client.post(
        RUNS, json={"prompt": "x"}, headers={**other, "Idempotency-Key": "k"}
    )
    assert mine.json()["run_id"] != theirs.json()["run_id"]


async def test_too_long_idempotency_key_is_400(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(
        RUNS, json={"prompt": "x"}, headers={**auth, "Idempotency-Key": "k" * 201}
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "Idempotency-Key"


async def test_named_agent_runs_with_its_config(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: object
) -> None:
    agent_id = await make_agent(model="atrium:offline", tools=[])  # type: ignore[operator]
    run = await create_run(client, auth, "no tools here", agent_id=agent_id)
    assert run["agent_id"] == agent_id
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed"
    assert done["artifacts"] == []  # the agent has no write_artifact tool
    assert done["billing"]["tool_calls"] == 0
    assert hashlib.sha256(done["result"].encode()).hexdigest()  # a non-empty final answer
    assert "I wrote" not in done["result"]
