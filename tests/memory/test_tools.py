"""An agent's memory tools (`config.memory`), driven by the offline model's script: a fact
remembered in one thread is found in another, a namespace outside the config is a tool error,
an approval-gated write waits and writes nothing when denied, the history and the run's
events name the run and the tool call, another account sees nothing; every 400 on
`config.memory` names its entry."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from atrium.agents.memory_config import SEGMENT_PATTERN
from atrium.memory.namespaces import SEGMENT_PATTERN as STORE_SEGMENT_PATTERN
from tests.agents.test_validation import assert_invalid
from tests.conftest import KeyFactory, bearer
from tests.runs.actions_helpers import act, events_of, wait_status
from tests.runs.helpers import create_run, wait_finished

AGENTS = "/v1/agents"
ITEMS = "/v1/memory/items"
BLOCKS = "/v1/memory/blocks"
MEMORY = {"read": [["users"]], "write": [["users", "alice"]]}


async def _agent(client: httpx.AsyncClient, auth: dict[str, str], memory: dict[str, Any]) -> str:
    body = {"name": "remembers", "config": {"tools": [], "memory": memory}}
    response = await client.post(AGENTS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    agent_id: str = response.json()["agent_id"]
    return agent_id


def _call(name: str, **arguments: Any) -> str:
    return f"call {name} {json.dumps(arguments)}"


async def _run(
    client: httpx.AsyncClient, auth: dict[str, str], agent_id: str, *lines: str, **body: Any
) -> dict[str, Any]:
    run = await create_run(client, auth, "\n".join(lines), agent_id=agent_id, **body)
    return await wait_finished(client, auth, run["run_id"])


async def test_remembered_in_one_thread_found_in_another(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    agent_id = await _agent(client, auth, MEMORY)
    shown = (await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()["config"]["memory"]
    assert shown == {**MEMORY, "blocks": [], "require_approval": "never"}
    write = _call(
        "memory_write", namespace=["users", "alice"], key="coffee", value={"likes": "espresso"}
    )
    first = await _run(client, auth, agent_id, "Remember Alice's coffee.", write)
    assert first["status"] == "completed", first
    assert "memory_write returned: Remembered 'coffee'" in first["result"]

    second = await _run(
        client, auth, agent_id, "What does Alice drink?", _call("memory_search", query="espresso")
    )
    assert second["status"] == "completed", second
    assert second["thread_id"] != first["thread_id"]
    assert '"key":"coffee"' in second["result"] and "espresso" in second["result"]

    # Provenance: the history and the writing run's events name the run and the tool call.
    events = await events_of(client, auth, first["run_id"])
    written = [event for event in events if event["event"] == "memory.written"]
    assert len(written) == 1
    data = written[0]["data"]
    assert data["namespace"] == ["users", "alice"] and data["key"] == "coffee"
    assert data["tool_call_id"] == "offline-call-1" and data["run_id"] == first["run_id"]
    called = next(event for event in events if event["event"] == "tool.called")
    assert called["data"]["tool_call_id"] == data["tool_call_id"]
    history = (await client.get(f"{ITEMS}/{data['item_id']}/history", headers=auth)).json()
    [entry] = history["data"]
    assert entry["action"] == "written" and entry["api_key_id"] is None
    assert (entry["run_id"], entry["tool_call_id"]) == (first["run_id"], "offline-call-1")

    # Another account's agent with the same config finds nothing, and cannot read the item.
    other = bearer((await make_key()).key)
    their_agent = await _agent(client, other, MEMORY)
    theirs = await _run(
        client, other, their_agent, "Any coffee?", _call("memory_search", query="espresso")
    )
    assert "memory_search returned: Nothing remembered matches 'espresso'." in theirs["result"]
    assert (await client.get(f"{ITEMS}/{data['item_id']}", headers=other)).status_code == 404

    # A delete is recorded the same way, and announced on the run's stream.
    gone = await _run(
        client,
        auth,
        agent_id,
        _call("memory_delete", namespace=["users", "alice"], key="coffee"),
    )
    assert "memory_delete returned: Forgot 'coffee'" in gone["result"]
    deleted = [
        e for e in await events_of(client, auth, gone["run_id"]) if e["event"] == "memory.deleted"
    ]
    assert [e["data"]["item_id"] for e in deleted] == [data["item_id"]]
    history = (await client.get(f"{ITEMS}/{data['item_id']}/history", headers=auth)).json()
    assert [(e["action"], e["run_id"]) for e in history["data"]] == [
        ("deleted", gone["run_id"]),
        ("written", first["run_id"]),
    ]


async def test_outside_the_config_is_a_tool_error_the_run_survives(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth, MEMORY)
    await client.put(
        ITEMS, json={"namespace": ["teams"], "key": "k", "value": "team secret"}, headers=auth
    )
    run = await _run(
        client,
        auth,
        agent_id,
        _call("memory_write", namespace=["users", "bob"], key="k", value=1),
        _call("memory_search", query="secret", namespace=["teams"]),
        _call("memory_search", query="secret"),
        _call("memory_write", namespace=["users", "alice"], key="", value=1),
    )
    assert run["status"] == "completed", run
    result = run["result"]
    assert "memory_write failed: namespace 'users/bob' is outside what this agent may write" in (
        result
    )
    assert "memory_search failed: namespace 'teams' is outside what this agent may read" in result
    # Searched everywhere, only the readable namespaces come back.
    assert "memory_search returned: Nothing remembered matches 'secret'." in result
    assert "memory_write failed: key:" in result
    listed = (await client.get(ITEMS, headers=auth)).json()["data"]
    assert [item["namespace"] for item in listed] == [["teams"]]
    events = await events_of(client, auth, run["run_id"])
    assert not [event for event in events if event["event"].startswith("memory.")]
    errors = [e["data"]["is_error"] for e in events if e["event"] == "tool.returned"]
    assert errors == [True, True, False, True]


async def test_an_approval_gated_write_waits_and_a_denial_writes_nothing(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth, {**MEMORY, "require_approval": ["memory_write"]})
    write = _call("memory_write", namespace=["users", "alice"], key="tea", value="green")
    denied = await create_run(client, auth, write, agent_id=agent_id)
    waiting = await wait_status(client, auth, denied["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert call["kind"] == "approval" and call["name"] == "memory_write"
    assert call["arguments"]["key"] == "tea"
    answer = {"approvals": [{"tool_call_id": call["id"], "approve": False, "reason": "no tea"}]}
    assert (await act(client, auth, denied["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, denied["run_id"])
    assert "memory_write failed: denied: no tea" in done["result"]
    assert (await client.get(ITEMS, headers=auth)).json()["data"] == []
    events = await events_of(client, auth, denied["run_id"])
    assert not [event for event in events if event["event"] == "memory.written"]

    # A write the config refuses anyway asks nobody: it fails at once.
    outside = _call("memory_write", namespace=["users", "bob"], key="tea", value="black")
    refused = await _run(client, auth, agent_id, outside)
    assert refused["status"] == "completed", refused
    assert "memory_write failed: namespace 'users/bob' is outside" in refused["result"]

    approved = await create_run(client, auth, write, agent_id=agent_id)
    waiting = await wait_status(client, auth, approved["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    answer = {"approvals": [{"tool_call_id": call["id"], "approve": True}]}
    assert (await act(client, auth, approved["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, approved["run_id"])
    assert "memory_write returned: Remembered 'tea'" in done["result"]
    [item] = (await client.get(ITEMS, headers=auth)).json()["data"]
    history = (await client.get(f"{ITEMS}/{item['item_id']}/history", headers=auth)).json()
    assert history["data"][0]["run_id"] == approved["run_id"]
    assert history["data"][0]["tool_call_id"] == call["id"]


@pytest.mark.parametrize(
    ("memory", "parameter"),
    [
        ("all", "config.memory"),
        ({"read": "users"}, "config.memory.read"),
        ({"write": [["users"], "alice"]}, "config.memory.write[1]"),
        ({"write": [["users", "a/b"]]}, "config.memory.write[0][1]"),
        ({"write": [["a"] * 9]}, "config.memory.write[0]"),
        ({"read": [["a"], ["a"]]}, "config.memory.read[1]"),
        ({"blocks": ["persona", "bad label"]}, "config.memory.blocks[1]"),
        ({"require_approval": "sometimes"}, "config.memory.require_approval"),
        ({"require_approval": ["memory_search"]}, "config.memory.require_approval[0]"),
        ({"forget": []}, "config.memory.forget"),
    ],
)
async def test_bad_memory_config_is_a_400_naming_the_entry(
    client: httpx.AsyncClient, auth: dict[str, str], memory: Any, parameter: str
) -> None:
    body = {"name": "bad", "config": {"memory": memory}}
    assert_invalid(await client.post(AGENTS, json=body, headers=auth), parameter)
    assert (await client.get(AGENTS, headers=auth)).json()["data"] == []


async def test_memory_is_cleared_with_null_and_segments_match_the_store(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    assert SEGMENT_PATTERN == STORE_SEGMENT_PATTERN
    # Beside the built-in tools (named by text in config.tools).
    made = await client.post(
        AGENTS, json={"name": "built-ins", "config": {"memory": MEMORY}}, headers=auth
    )
    assert made.status_code == 201, made.text
    assert made.json()["config"]["tools"] == ["write_artifact", "list_artifacts", "read_artifact"]
    agent_id = await _agent(client, auth, MEMORY)
    changed = await client.put(
        f"{AGENTS}/{agent_id}", json={"config": {"memory": None}}, headers=auth
    )
    assert changed.status_code == 200 and changed.json()["config"]["memory"] is None


async def test_a_function_named_like_a_memory_tool_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    function = {"type": "function", "name": "memory_search"}
    body = {"name": "clash", "config": {"tools": [function], "memory": MEMORY}}
    assert_invalid(await client.post(AGENTS, json=body, headers=auth), "config.tools")
    made = await client.post(
        AGENTS, json={"name": "tools first", "config": {"tools": [function]}}, headers=auth
    )
    assert made.status_code == 201, made.text
    url = f"{AGENTS}/{made.json()['agent_id']}"
    assert_invalid(
        await client.put(url, json={"config": {"memory": MEMORY}}, headers=auth), "config.memory"
    )
    assert (await client.get(url, headers=auth)).json()["config"]["memory"] is None


async def test_a_tool_write_may_expire(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await _agent(client, auth, MEMORY)
    run = await _run(
        client,
        auth,
        agent_id,
        _call("memory_write", namespace=["users", "alice"], key="otp", value="1", ttl_seconds=0),
        _call("memory_write", namespace=["users", "alice"], key="otp", value="2", ttl_seconds=60),
    )
    assert "memory_write failed: ttl_seconds:" in run["result"]
    [item] = (await client.get(ITEMS, headers=auth)).json()["data"]
    assert item["value"] == "2" and item["expires_at"] is not None


async def test_block_tools_edit_the_blocks_the_config_names(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    made = await client.post(
        BLOCKS, json={"label": "user", "value": "Name: Sam", "limit": 60}, headers=auth
    )
    assert made.status_code == 201, made.text
    agent_id = await _agent(
        client, auth, {"blocks": ["user"], "require_approval": ["block_replace"]}
    )
    run = await _run(
        client,
        auth,
        agent_id,
        _call("block_append", label="user", text="Likes: tea"),
        _call("block_append", label="persona", text="I am kind."),
        _call("block_append", label="user", text="x" * 100),
    )
    assert run["status"] == "completed", run
    result = run["result"]
    assert "block_append returned: Block 'user' is at version 2 (20 of 60 characters)." in result
    assert "block_append failed: block 'persona' is not one this agent may edit" in result
    assert "over its limit of 60" in result
    block = (await client.get(f"{BLOCKS}/user", headers=auth)).json()
    assert (block["value"], block["version"]) == ("Name: Sam\nLikes: tea", 2)
    history = (await client.get(f"{BLOCKS}/user/history", headers=auth)).json()["data"]
    assert (history[0]["action"], history[0]["run_id"], history[0]["tool_call_id"]) == (
        "appended",
        run["run_id"],
        "offline-call-1",
    )
    written = [e["data"] for e in await events_of(client, auth, run["run_id"])]
    edits = [data for data in written if "label" in data and "version" in data]
    assert [(e["label"], e["version"], e["tool_call_id"]) for e in edits] == [
        ("user", 2, "offline-call-1")
    ]

    # block_replace waits for approval; denied, the block is unchanged.
    replace = _call("block_replace", label="user", old_text="tea", new_text="coffee")
    waiting_run = await create_run(client, auth, replace, agent_id=agent_id)
    waiting = await wait_status(client, auth, waiting_run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    assert (call["kind"], call["name"]) == ("approval", "block_replace")
    answer = {"approvals": [{"tool_call_id": call["id"], "approve": False}]}
    assert (await act(client, auth, waiting_run["run_id"], answer)).status_code == 200
    done = await wait_finished(client, auth, waiting_run["run_id"])
    assert "block_replace failed: denied" in done["result"]
    assert (await client.get(f"{BLOCKS}/user", headers=auth)).json()["version"] == 2

    # Another account's agent names the same label: it has no such block.
    other = bearer((await make_key()).key)
    their_agent = await _agent(client, other, {"blocks": ["user"]})
    theirs = await _run(
        client, other, their_agent, _call("block_append", label="user", text="Likes: milk")
    )
    assert "block_append failed: no memory block 'user'" in theirs["result"]
    assert (await client.get(f"{BLOCKS}/user", headers=auth)).json()["version"] == 2
