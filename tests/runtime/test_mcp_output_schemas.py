"""A hostile MCP server's tool output schemas: atrium checks `structuredContent` against them
without fetching anything or backtracking, and `/healthz` keeps answering meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.hostile_mcp_server import ANSWER, HostileMcpServer
from tests.runtime.test_mcp_tools import SETTINGS, mcp_tool
from tests.runtime.test_output_schema_regexes import longest_healthz_gap
from tests.schema_host import SchemaHost, schema_host

__all__ = ["schema_host"]  # the fixture


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return SETTINGS


@pytest.fixture
def hostile(schema_host: SchemaHost) -> Iterator[HostileMcpServer]:
    with HostileMcpServer(f"{schema_host.base}/tool-output.json") as server:
        yield server


async def test_a_catastrophic_output_pattern_does_not_hold_the_server(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    hostile: HostileMcpServer,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(hostile.url, label="hostile")])
    run = await create_run(client, auth, "call hostile_catastrophic_tool {}", agent_id=agent_id)
    gap = await longest_healthz_gap(client, auth, run["run_id"])
    assert gap < 1.0, f"/healthz went unanswered for {gap:.2f} s while the run validated"
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR"
    assert f'"{ANSWER}" does not match' in done["error"]["message"]


async def test_a_remote_ref_in_an_output_schema_is_never_fetched(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    hostile: HostileMcpServer,
    schema_host: SchemaHost,
) -> None:
    agent_id = await make_agent(tools=[mcp_tool(hostile.url, label="hostile")])
    run = await create_run(client, auth, "call hostile_remote_tool {}", agent_id=agent_id)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "TOOL_ERROR"
    assert "output schema atrium cannot use" in done["error"]["message"]
    await asyncio.sleep(0.2)  # a fetch started by the run would have arrived
    assert schema_host.hits == []
