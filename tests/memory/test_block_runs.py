"""Blocks in runs: rendered into the instructions of every run of the agents that list them
(`config.blocks`), read when the run executes, so an edit is seen by the next run of each agent
sharing the block; the run records the versions it saw. And the writes of the block tools
(`append_text`, `replace_text`), recorded with the run and tool call."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from atrium.agents.memory_config import BLOCK_LABEL_PATTERN
from atrium.auth.service import IssuedKey
from atrium.db.engine import Database
from atrium.errors import InvalidParameter
from atrium.memory.blocks import service
from atrium.memory.blocks.errors import BlockNotFound, BlockTooLong
from atrium.memory.blocks.schemas import LABEL_PATTERN
from atrium.memory.service import Writer
from atrium.runtime.llm_models import ModelRegistry
from tests.agents.test_validation import assert_invalid
from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import RUNS, create_run, wait_finished

BLOCKS = "/v1/memory/blocks"
AGENTS = "/v1/agents"
ECHO = "test:echo-instructions"
NONE = "(no instructions)"


def _echo(_messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(info.instructions or NONE)])


async def _echo_stream(_messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield info.instructions or NONE


@pytest.fixture(autouse=True)
def _echo_model(models: ModelRegistry) -> None:
    """A model that answers with the instructions it was sent."""
    models.register(ECHO, FunctionModel(_echo, stream_function=_echo_stream))


async def _agent(
    client: httpx.AsyncClient, auth: dict[str, str], blocks: list[str], **config: Any
) -> str:
    body = {"name": "agent", "config": {"model": ECHO, "tools": [], "blocks": blocks, **config}}
    response = await client.post(AGENTS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    assert response.json()["config"]["blocks"] == blocks
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def _run(client: httpx.AsyncClient, auth: dict[str, str], agent_id: str) -> dict[str, Any]:
    run = await create_run(client, auth, "What do you remember?", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    return done


async def _block(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(BLOCKS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    block: dict[str, Any] = response.json()
    return block


async def test_an_edit_is_seen_by_the_next_run_of_each_agent_sharing_the_block(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    persona = await _block(client, auth, label="persona", value="I am Ada, terse.", limit=100)
    user = await _block(client, auth, label="user", value="Name: Sam")
    first = await _agent(client, auth, ["persona", "user"], instructions="Be brief.")
    second = await _agent(client, auth, ["persona"])

    done = await _run(client, auth, first)
    assert done["result"] == (
        "Be brief.\n\n<memory_blocks>\n"
        '<block label="persona" version="1" chars="16" limit="100">\nI am Ada, terse.\n</block>\n'
        '<block label="user" version="1" chars="9" limit="2000">\nName: Sam\n</block>\n'
        "</memory_blocks>"
    )
    assert done["memory_blocks"] == [
        {"label": "persona", "block_id": persona["block_id"], "version": 1},
        {"label": "user", "block_id": user["block_id"], "version": 1},
    ]

    edited = await client.patch(
        f"{BLOCKS}/persona", json={"value": "I am Ada, kind."}, headers=auth
    )
    assert edited.json()["version"] == 2
    for agent_id in (second, first):
        seen = await _run(client, auth, agent_id)
        assert "I am Ada, kind." in seen["result"] and "terse" not in seen["result"]
        assert seen["memory_blocks"][0] == {
            "label": "persona",
            "block_id": persona["block_id"],
            "version": 2,
        }
    # Without instructions the blocks are the whole of them.
    assert seen["result"].startswith("Be brief.\n\n<memory_blocks>")
    alone = await _run(client, auth, second)
    assert alone["result"].startswith('<memory_blocks>\n<block label="persona" version="2"')

    # The run as it was finished keeps the versions it saw.
    again = (await client.get(f"{RUNS}/{done['run_id']}", headers=auth)).json()
    assert [block["version"] for block in again["memory_blocks"]] == [1, 1]


async def test_runs_through_the_agent_graph_see_the_blocks_too(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    # With a tool the run goes through the agent graph instead of a single request.
    await _block(client, auth, label="persona", value="graph persona")
    agent_id = await _agent(client, auth, ["persona"], tools=["list_artifacts"])
    done = await _run(client, auth, agent_id)
    assert done["result"].endswith(
        '<block label="persona" version="1" chars="13" limit="2000">\ngraph persona\n</block>\n'
        "</memory_blocks>"
    )


async def test_concurrent_appends_each_keep_the_others(
    client: httpx.AsyncClient, auth: dict[str, str], api_key: IssuedKey, db: Database
) -> None:
    await _block(client, auth, label="log", value="")

    async def append(index: int) -> None:
        async with db.transaction() as session:
            await service.append_text(
                session,
                account_id=api_key.account_id,
                label="log",
                text=f"line {index}",
                writer=Writer(run_id=f"run_{index}", tool_call_id="call"),
            )

    await asyncio.gather(*(append(index) for index in range(8)))
    block = (await client.get(f"{BLOCKS}/log", headers=auth)).json()
    assert block["version"] == 9
    assert sorted(block["value"].split("\n")) == sorted(f"line {index}" for index in range(8))
    history = (await client.get(f"{BLOCKS}/log/history", headers=auth)).json()["data"]
    assert sorted(entry["version"] for entry in history) == list(range(1, 10))


async def test_missing_deleted_and_other_accounts_blocks_render_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    await _block(client, auth, label="persona", value="mine only")
    other = bearer((await make_key()).key)
    theirs = await _agent(client, other, ["persona"], instructions="Hi.")
    done = await _run(client, other, theirs)
    assert done["result"] == "Hi." and done["memory_blocks"] == []

    mine = await _agent(client, auth, ["persona", "later"])
    assert [b["label"] for b in (await _run(client, auth, mine))["memory_blocks"]] == ["persona"]
    await client.delete(f"{BLOCKS}/persona", headers=auth)
    gone = await _run(client, auth, mine)
    assert gone["result"] == NONE and gone["memory_blocks"] == []
    # A block created after the agent is rendered from the next run on.
    later = await _block(client, auth, label="later", value="made after")
    seen = await _run(client, auth, mine)
    assert "made after" in seen["result"]
    assert seen["memory_blocks"] == [
        {"label": "later", "block_id": later["block_id"], "version": 1}
    ]


async def test_runs_of_agents_without_blocks_show_none(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent = await client.post(
        AGENTS, json={"name": "plain", "config": {"model": ECHO, "tools": []}}, headers=auth
    )
    assert agent.json()["config"]["blocks"] == []
    done = await _run(client, auth, agent.json()["agent_id"])
    assert "memory_blocks" not in done


@pytest.mark.parametrize(
    ("blocks", "parameter"),
    [
        ("persona", "config.blocks"),
        (None, "config.blocks"),
        ([1], "config.blocks[0]"),
        (["ok", "a b"], "config.blocks[1]"),
        (["x" * 65], "config.blocks[0]"),
        (["a", "a"], "config.blocks[1]"),
        ([f"b{index}" for index in range(33)], "config.blocks"),
    ],
)
async def test_bad_config_blocks_name_their_entry(
    client: httpx.AsyncClient, auth: dict[str, str], blocks: Any, parameter: str
) -> None:
    body = {"name": "agent", "config": {"blocks": blocks}}
    assert_invalid(await client.post(AGENTS, json=body, headers=auth), parameter)
    assert (await client.get(AGENTS, headers=auth)).json()["data"] == []


async def test_config_blocks_are_changed_by_put(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth, ["persona"])
    changed = await client.put(
        f"{AGENTS}/{agent_id}", json={"config": {"blocks": ["user", "persona"]}}, headers=auth
    )
    assert changed.status_code == 200 and changed.json()["config"]["blocks"] == [
        "user",
        "persona",
    ]
    bad = await client.put(f"{AGENTS}/{agent_id}", json={"config": {"blocks": ["?"]}}, headers=auth)
    assert_invalid(bad, "config.blocks[0]")
    kept = (await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()
    assert kept["config"]["blocks"] == ["user", "persona"]


def test_label_patterns_agree() -> None:
    assert LABEL_PATTERN == BLOCK_LABEL_PATTERN


async def test_tool_writes_are_versions_with_the_run_and_tool_call(
    client: httpx.AsyncClient, auth: dict[str, str], api_key: IssuedKey, db: Database
) -> None:
    await _block(client, auth, label="user", value="Name: Sam", limit=40)
    account = api_key.account_id

    async def append(text: str, call: str) -> None:
        async with db.transaction() as session:
            await service.append_text(
                session,
                account_id=account,
                label="user",
                text=text,
                writer=Writer(run_id="run_x", tool_call_id=call),
            )

    async def replace(old: str, new: str, call: str) -> None:
        async with db.transaction() as session:
            await service.replace_text(
                session,
                account_id=account,
                label="user",
                old_text=old,
                new_text=new,
                writer=Writer(run_id="run_x", tool_call_id=call),
            )

    await append("Likes: tea", "call-1")
    await replace("tea", "tea, coffee", "call-2")
    block = (await client.get(f"{BLOCKS}/user", headers=auth)).json()
    assert (block["value"], block["version"]) == ("Name: Sam\nLikes: tea, coffee", 3)

    refused: list[tuple[Any, str]] = [
        (append("x" * 30, "call-3"), "text"),
        (append("", "call-3"), "text"),
        (replace("Sam", "S" * 40, "call-3"), "new_text"),
        (replace("nobody", "x", "call-3"), "old_text"),
        (replace("", "x", "call-3"), "old_text"),
    ]
    for attempt, parameter in refused:
        with pytest.raises(InvalidParameter) as raised:
            await attempt
        assert raised.value.parameter == parameter
    with pytest.raises(BlockTooLong, match="over its limit of 40"):
        await append("y" * 40, "call-3")
    await append("tea", "call-4")  # "tea" now occurs twice: which one to replace is unsaid
    with pytest.raises(InvalidParameter, match="occurs 2 times"):
        await replace("tea", "milk", "call-5")
    with pytest.raises(BlockNotFound):
        async with db.transaction() as session:
            await service.append_text(
                session, account_id=account, label="nope", text="x", writer=Writer()
            )

    history = (await client.get(f"{BLOCKS}/user/history", headers=auth)).json()["data"]
    assert [(e["action"], e["version"], e["tool_call_id"]) for e in history] == [
        ("appended", 4, "call-4"),
        ("replaced", 3, "call-2"),
        ("appended", 2, "call-1"),
        ("created", 1, None),
    ]
    assert {e["run_id"] for e in history[:3]} == {"run_x"}
