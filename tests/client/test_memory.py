"""Memory through the Python client and the `atrium` command, against a real server with the
offline model: put, read by id and by key, list by prefix, search, history naming the API key
or the run and tool call that wrote each version, delete."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from atrium.client import (
    AsyncClient,
    Client,
    ConflictError,
    InvalidParameterError,
    NotFoundError,
)
from tests.client.conftest import Server


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    return replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})


def test_put_get_list_search_history_delete(atrium: Client) -> None:
    first = atrium.memory.put("users/alice", "drink", {"drink": "espresso"}, text="espresso")
    again = atrium.memory.put(["users", "alice"], "drink", {"drink": "green tea"})
    assert again.item_id == first.item_id and again.namespace == ["users", "alice"]
    atrium.memory.put("users/bob", "drink", {"drink": "latte"}, ttl_seconds=3600)
    atrium.memory.put("teams/core", "motto", "ship it")

    assert atrium.memory.get(first.item_id).value == {"drink": "green tea"}
    assert atrium.memory.get_by_key("users/alice", "drink").item_id == first.item_id
    users = atrium.memory.list(namespace_prefix="users")
    assert sorted(item.key + "@" + "/".join(item.namespace) for item in users.data) == [
        "drink@users/alice",
        "drink@users/bob",
    ]
    assert len(list(atrium.memory.iter_all(limit=1))) == 3
    found = atrium.memory.search("green tea")
    assert [item.item_id for item in found] == [first.item_id]
    assert atrium.memory.search("latte", namespace_prefix=["users", "alice"]) == []
    assert [i.key for i in atrium.memory.search("latte", filter={"drink": "latte"})] == ["drink"]
    assert [i.key for i in atrium.memory.search("latte", mode="text")] == ["drink"]
    with pytest.raises(InvalidParameterError) as semantic:
        atrium.memory.search("latte", mode="semantic")  # this server has no embeddings model
    assert semantic.value.parameter == "mode"

    assert atrium.memory.delete(first.item_id).deleted is True
    with pytest.raises(NotFoundError):
        atrium.memory.get(first.item_id)
    history = atrium.memory.history(first.item_id)
    assert [entry.action for entry in history] == ["deleted", "written", "written"]
    assert all(entry.api_key_id is not None and entry.run_id is None for entry in history)
    with pytest.raises(InvalidParameterError):
        atrium.memory.put("users/alice", "", 1)


def test_history_names_the_run_and_tool_call(atrium: Client) -> None:
    agent = atrium.agents.create(
        "keeper", config={"tools": [], "memory": {"read": [[]], "write": [["users"]]}}
    )
    call = 'call memory_write {"namespace": ["users", "carol"], "key": "pet", "value": "cat"}'
    run = atrium.runs.wait(atrium.runs.create(call, agent_id=agent.agent_id).run_id)
    assert run.status == "completed"
    item = atrium.memory.get_by_key("users/carol", "pet")
    [entry] = atrium.memory.history(item.item_id)
    assert (entry.run_id, entry.tool_call_id, entry.api_key_id) == (
        run.run_id,
        "offline-call-1",
        None,
    )


async def test_memory_async(async_atrium: AsyncClient) -> None:
    item = await async_atrium.memory.put("notes", "todo", ["milk"], text="buy milk")
    assert [found.item_id for found in await async_atrium.memory.search("milk")] == [item.item_id]
    assert [i.item_id async for i in async_atrium.memory.iter_all(namespace_prefix="notes")] == [
        item.item_id
    ]
    assert (await async_atrium.memory.history(item.item_id))[0].action == "written"


def test_cli_memory(user: Server, atrium: Client) -> None:
    put = user.cli("memory", "put", "users/alice", "drink", '{"drink": "tea"}', "--json")
    assert put.returncode == 0, put.stderr
    item_id = json.loads(put.stdout)["item_id"]
    text = user.cli("memory", "put", "users/alice", "note", "likes rain")
    assert text.returncode == 0, text.stderr
    assert atrium.memory.get_by_key("users/alice", "note").value == "likes rain"

    shown = user.cli("memory", "get", item_id)
    assert shown.returncode == 0 and '"drink": "tea"' in shown.stdout
    by_key = user.cli("memory", "get", "users/alice", "drink", "--json")
    assert json.loads(by_key.stdout)["item_id"] == item_id
    listed = user.cli("memory", "list", "users")
    assert item_id in listed.stdout and "users/alice" in listed.stdout
    found = user.cli("memory", "search", "tea", "--json")
    assert [row["item_id"] for row in json.loads(found.stdout)["data"]] == [item_id]
    # This server has no embeddings model: search by meaning is refused, naming the option.
    semantic = user.cli("memory", "search", "tea", "--mode", "semantic")
    assert semantic.returncode == 1 and "(parameter: mode)" in semantic.stderr, semantic.stderr
    removed = user.cli("memory", "rm", item_id)
    assert removed.returncode == 0, removed.stderr
    history = user.cli("memory", "history", item_id)
    assert history.returncode == 0 and "deleted" in history.stdout and "key " in history.stdout
    missing = user.cli("memory", "get", item_id)
    assert missing.returncode != 0


def test_blocks(atrium: Client) -> None:
    made = atrium.blocks.create("persona", value="Terse.", limit=100)
    assert (made.version, made.chars, made.limit) == (1, 6, 100)
    changed = atrium.blocks.update("persona", value="Terse and kind.", if_version=1)
    assert changed.version == 2
    with pytest.raises(ConflictError):
        atrium.blocks.update("persona", value="x", if_version=1)
    with pytest.raises(InvalidParameterError):
        atrium.blocks.update("persona", value="x" * 101)
    assert [block.label for block in atrium.blocks.iter_all(limit=1)] == ["persona"]
    assert atrium.blocks.get("persona").value == "Terse and kind."
    assert atrium.blocks.delete("persona").deleted is True
    with pytest.raises(NotFoundError):
        atrium.blocks.get("persona")
    history = atrium.blocks.history("persona", limit=1)
    assert [(v.version, v.action) for v in history] == [
        (3, "deleted"),
        (2, "updated"),
        (1, "created"),
    ]
    assert all(v.api_key_id is not None for v in history)


def test_cli_blocks(user: Server) -> None:
    made = user.cli("blocks", "set", "user", "Likes tea.", "--limit", "50", "--json")
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["version"] == 1
    again = user.cli("blocks", "set", "user", "Likes green tea.", "--if-version", "1")
    assert again.returncode == 0, again.stderr
    stale = user.cli("blocks", "set", "user", "x", "--if-version", "1")
    assert stale.returncode != 0
    listed = user.cli("blocks", "list")
    assert "user" in listed.stdout and "16/50" in listed.stdout
    shown = user.cli("blocks", "get", "user")
    assert "Likes green tea." in shown.stdout
    history = user.cli("blocks", "history", "user", "--json")
    assert [v["version"] for v in json.loads(history.stdout)["data"]] == [2, 1]
    removed = user.cli("blocks", "rm", "user")
    assert removed.returncode == 0 and "Deleted user" in removed.stdout
