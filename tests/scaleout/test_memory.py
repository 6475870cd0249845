"""Memory across processes: two `atrium serve --no-worker` processes and one `atrium worker` on
one PostgreSQL database, all with the offline embedder. An agent with memory tools (the offline
model's script) remembers a fact in a thread created through one API process, and finds it in a
thread created through the other, by its tool and by meaning through the API (the worker's
write stored its vector); an approval-gated write, and a gated delete, made through one are
denied through the other and change nothing;
the provenance read through either names the run and the tool call; another account sees
nothing; a block shared by two agents, edited by one agent's tool through one process, is the
version the other agent's next run sees through the other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tests.scaleout.conftest import Topology, bearer

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]
RUNS = "/api/v1/public/agent/runs"
ITEMS = "/v1/memory/items"
MEMORY = {"read": [["users"]], "write": [["users", "alice"]], "require_approval": ["memory_delete"]}
GATED = {**MEMORY, "require_approval": ["memory_write"]}
EMBEDDINGS = {"ATRIUM_EMBEDDINGS_MODEL": "offline"}


def _call(name: str, **arguments: Any) -> str:
    return f"call {name} {json.dumps(arguments)}"


async def _until(http: httpx.AsyncClient, key: str, run_id: str, statuses: set[str]) -> dict:
    for _ in range(400):
        run = (await http.get(f"{RUNS}/{run_id}", headers=bearer(key))).json()
        if run["status"] in statuses:
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {statuses}: {run}")


async def _run(http: httpx.AsyncClient, key: str, agent_id: str, prompt: str) -> dict:
    made = await http.post(RUNS, json={"prompt": prompt, "agent_id": agent_id}, headers=bearer(key))
    assert made.status_code == 201, made.text
    return await _until(http, key, made.json()["run_id"], {"completed", "failed", "cancelled"})


async def _deny(
    asked_through: httpx.AsyncClient, denied_through: httpx.AsyncClient, key: str, body: dict
) -> dict:
    """Start a run whose tool call waits for approval, deny it through the other process, and
    return the finished run."""
    asked = await asked_through.post(RUNS, json=body, headers=bearer(key))
    assert asked.status_code == 201, asked.text
    waiting = await _until(denied_through, key, asked.json()["run_id"], {"requires_action"})
    [call] = waiting["required_action"]["tool_calls"]
    denial = {"approvals": [{"tool_call_id": call["id"], "approve": False, "reason": "keep"}]}
    answered = await denied_through.post(
        f"{RUNS}/{waiting['run_id']}/actions", json=denial, headers=bearer(key)
    )
    assert answered.status_code == 200, answered.text
    return await _until(asked_through, key, waiting["run_id"], {"completed", "failed"})


async def test_memory_through_two_api_processes(topology: Topology) -> None:
    one, two = topology.api(**EMBEDDINGS), topology.api(**EMBEDDINGS)
    topology.worker(**EMBEDDINGS)
    key, stranger = topology.new_key(), topology.new_key()
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=30) as first,
        httpx.AsyncClient(base_url=two.url, timeout=30) as second,
    ):
        body = {"name": "remembers", "config": {"tools": [], "memory": MEMORY}}
        made = await first.post("/v1/agents", json=body, headers=bearer(key))
        assert made.status_code == 201, made.text
        agent_id = made.json()["agent_id"]

        write = _call("memory_write", namespace=["users", "alice"], key="city", value="Lisbon")
        wrote = await _run(first, key, agent_id, write)
        assert "memory_write returned: Remembered 'city'" in wrote["result"], wrote
        found = await _run(second, key, agent_id, _call("memory_search", query="Lisbon"))
        assert found["thread_id"] != wrote["thread_id"]
        assert "Lisbon" in found["result"] and '"key":"city"' in found["result"], found
        near = await second.post(
            "/v1/memory/search",
            json={"query": "which city, Lisbon?", "mode": "semantic"},
            headers=bearer(key),
        )
        assert [item["key"] for item in near.json()["data"]] == ["city"], near.text

        # A gated write and a gated delete asked through one process, denied through the
        # other: nothing written, nothing lost.
        careful = await first.post(
            "/v1/agents",
            json={"name": "careful", "config": {"tools": [], "memory": GATED}},
            headers=bearer(key),
        )
        pet = _call("memory_write", namespace=["users", "alice"], key="pet", value="a cat")
        body = {"prompt": pet, "agent_id": careful.json()["agent_id"]}
        denied = await _deny(first, second, key, body)
        assert "memory_write failed: denied: keep" in denied["result"], denied
        forget = _call("memory_delete", namespace=["users", "alice"], key="city")
        denied = await _deny(first, second, key, {"prompt": forget, "agent_id": agent_id})
        assert "memory_delete failed: denied: keep" in denied["result"], denied

        [item] = (await second.get(ITEMS, headers=bearer(key))).json()["data"]
        assert item["value"] == "Lisbon"
        history = await first.get(f"{ITEMS}/{item['item_id']}/history", headers=bearer(key))
        [entry] = history.json()["data"]
        assert (entry["action"], entry["run_id"]) == ("written", wrote["run_id"])
        assert entry["tool_call_id"] == "offline-call-1"

        # Another account, through either process: no item, no history, no search hit.
        for http in (first, second):
            assert (await http.get(ITEMS, headers=bearer(stranger))).json()["data"] == []
            gone = await http.get(f"{ITEMS}/{item['item_id']}/history", headers=bearer(stranger))
            assert gone.status_code == 404
            for mode in ("text", "semantic"):
                searched = await http.post(
                    "/v1/memory/search",
                    json={"query": "Lisbon", "mode": mode},
                    headers=bearer(stranger),
                )
                assert searched.json()["data"] == [], searched.text


async def test_a_shared_block_edited_through_one_process_is_seen_through_the_other(
    topology: Topology,
) -> None:
    one, two = topology.api(), topology.api()
    topology.worker()
    key = topology.new_key()
    async with (
        httpx.AsyncClient(base_url=one.url, timeout=30) as first,
        httpx.AsyncClient(base_url=two.url, timeout=30) as second,
    ):
        block = {"label": "team", "value": "The team meets on Mondays."}
        made = await first.post("/v1/memory/blocks", json=block, headers=bearer(key))
        assert made.status_code == 201, made.text
        editor_config = {"tools": [], "blocks": ["team"], "memory": {"blocks": ["team"]}}
        editor = await first.post(
            "/v1/agents", json={"name": "editor", "config": editor_config}, headers=bearer(key)
        )
        reader = await second.post(
            "/v1/agents",
            json={"name": "reader", "config": {"tools": [], "blocks": ["team"]}},
            headers=bearer(key),
        )
        before = await _run(second, key, reader.json()["agent_id"], "When do we meet?")
        assert [(seen["label"], seen["version"]) for seen in before["memory_blocks"]] == [
            ("team", 1)
        ]

        append = _call("block_append", label="team", text="Fridays too, from December.")
        edited = await _run(first, key, editor.json()["agent_id"], append)
        assert "block_append returned" in edited["result"], edited
        after = await _run(second, key, reader.json()["agent_id"], "When do we meet now?")
        assert [(seen["label"], seen["version"]) for seen in after["memory_blocks"]] == [
            ("team", 2)
        ]
        shown = (await second.get("/v1/memory/blocks/team", headers=bearer(key))).json()
        assert shown["value"] == "The team meets on Mondays.\nFridays too, from December."
        history = await first.get("/v1/memory/blocks/team/history", headers=bearer(key))
        newest = history.json()["data"][0]
        assert (newest["action"], newest["run_id"]) == ("appended", edited["run_id"])
