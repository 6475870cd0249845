"""What an MCP server may send a run: a tool result within the tool-output limit, a tool list
within its count and size limits, and the tool lists kept for later runs within their own
bound, leaving when they expire (docs/guide/tools.md#limits)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ToolReturnPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy import select

from atrium.db.engine import Database
from atrium.db.models import Run
from atrium.runtime.llm_models import ModelRegistry
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.bulky_mcp_server import BulkyMcpServer
from tests.runtime.test_mcp_tools import SETTINGS, Move, mcp_tool, scripted

MB = 1 << 20


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return SETTINGS


async def _stored_messages(db: Database, run_id: str) -> bytes:
    async with db.session(write=False) as session:
        stored = (await session.execute(select(Run.messages).where(Run.id == run_id))).scalar()
    return json.dumps(stored).encode()


@pytest.mark.parametrize(
    "sse, size",
    [(False, 8 * MB), (True, 8 * MB), (True, 100_000)],
    ids=["8-mb-json", "8-mb-sse", "100-kb-read-whole"],
)
async def test_a_large_result_fails_the_call_and_reaches_neither_the_model_nor_the_run(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    app: Any,
    db: Database,
    sse: bool,
    size: int,
) -> None:
    """8 MB is refused as it arrives; 100 KB is read (within the bytes read of a response),
    then refused for its size as JSON."""
    limit = app.state.settings.run_max_prompt_chars
    sent: list[int] = []  # the size of each request the model received

    def fetch_then_report(messages: list[ModelMessage], info: AgentInfo) -> Move:
        sent.append(len(ModelMessagesTypeAdapter.dump_json(messages)))
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        return f"got {len(str(returns[0].content))}" if returns else ("big_t0", {"text": "x"})

    models.register("test:fetches", scripted(fetch_then_report))
    async with BulkyMcpServer(result_bytes=size, sse=sse) as server:
        agent_id = await make_agent(model="test:fetches", tools=[mcp_tool(server.url, "big")])
        started = time.monotonic()
        run = await create_run(client, auth, "fetch", agent_id=agent_id)
        done = await wait_finished(client, auth, run["run_id"], within=60)
    assert server.calls == 1
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR"
    assert done["error"]["message"].startswith("big_t0 (MCP) ")
    assert "ATRIUM_RUN_MAX_PROMPT_CHARS" in done["error"]["message"]
    # Only a result read whole is measured.
    assert ("characters of JSON)" in done["error"]["message"]) == (size < MB)
    # Refused as it arrived, not after the 60 s call timeout.
    assert time.monotonic() - started < 30
    assert max(sent) < limit
    assert len(await _stored_messages(db, run["run_id"])) < limit


async def test_a_result_within_the_limit_reaches_the_model(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    app: Any,
) -> None:
    size = app.state.settings.run_max_prompt_chars - 100

    def fetch_then_report(messages: list[ModelMessage], info: AgentInfo) -> Move:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        return f"got {len(str(returns[0].content))}" if returns else ("big_t0", {"text": "x"})

    models.register("test:fetches-less", scripted(fetch_then_report))
    async with BulkyMcpServer(result_bytes=size) as server:
        agent_id = await make_agent(model="test:fetches-less", tools=[mcp_tool(server.url, "big")])
        run = await create_run(client, auth, "fetch", agent_id=agent_id)
        done = await wait_finished(client, auth, run["run_id"], within=60)
    assert done["status"] == "completed", done
    assert done["result"] == f"got {size}"


@pytest.mark.fresh_app  # reads the tool lists its own app keeps
async def test_servers_listing_5000_tools_fail_their_runs_and_are_not_kept(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, app: Any
) -> None:
    settings = app.state.settings
    lists = app.state.workers.runtime.mcp.lists
    for index in range(10):
        label = f"many{index}"
        async with BulkyMcpServer(tools=5_000) as server:  # about 8 MB of tools
            agent_id = await make_agent(tools=[mcp_tool(server.url, label)])
            run = await create_run(client, auth, 'call x {"text": "x"}', agent_id=agent_id)
            done = await wait_finished(client, auth, run["run_id"], within=60)
        assert done["status"] == "failed", done
        assert done["error"]["code"] == "TOOL_ERROR"
        message = done["error"]["message"]
        assert message.startswith(f"MCP server {label} "), message
        assert "ATRIUM_MCP_MAX_TOOL" in message, message
        assert lists.held_bytes <= settings.mcp_tools_cache_max_bytes
    assert lists.held_bytes == 0


@pytest.mark.parametrize(
    "settings_overrides",
    [{**SETTINGS, "mcp_max_tools": 301, "mcp_tools_cache_max_bytes": MB}],
    ids=["small-cache"],
)
async def test_a_server_over_the_tool_count_fails_the_run_naming_it(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    async with BulkyMcpServer(tools=302, tool_bytes=200) as server:
        agent_id = await make_agent(tools=[mcp_tool(server.url, "wide")])
        run = await create_run(client, auth, 'call x {"text": "x"}', agent_id=agent_id)
        done = await wait_finished(client, auth, run["run_id"], within=60)
    assert done["error"]["code"] == "TOOL_ERROR", done
    assert done["error"]["message"] == (
        "MCP server wide lists more than 301 tools (ATRIUM_MCP_MAX_TOOLS)"
    )


@pytest.mark.parametrize(
    "settings_overrides",
    [{**SETTINGS, "mcp_tools_cache_max_bytes": 3 * MB, "mcp_tools_cache_seconds": 3.0}],
    ids=["3-mb-cache"],
)
@pytest.mark.fresh_app  # reads the tool lists its own app keeps
async def test_kept_tool_lists_stay_within_their_bound_and_leave_when_they_expire(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, app: Any
) -> None:
    lists = app.state.workers.runtime.mcp.lists
    held: list[int] = []
    for index in range(5):
        async with BulkyMcpServer(tools=800, tool_bytes=1_200) as server:  # about 1 MB each
            agent_id = await make_agent(tools=[mcp_tool(server.url, f"mid{index}")])
            run = await create_run(
                client, auth, f'call mid{index}_t0 {{"text": "x"}}', agent_id=agent_id
            )
            done = await wait_finished(client, auth, run["run_id"], within=60)
        assert done["status"] == "completed", done
        held.append(lists.held_bytes)
    assert 0 < max(held) <= 3 * MB
    # Nothing reads the cache from here on: its lists leave on their own.
    await asyncio.sleep(3.5)
    assert lists.held_bytes == 0 and len(lists) == 0
