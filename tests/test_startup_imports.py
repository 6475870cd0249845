"""A process imports a library when it first uses it, not at start
(docs/decisions/0015-imports-on-first-use.md).

A provider's SDK comes with the first model of that provider, the MCP SDK and fastmcp with the
first run that has an MCP server, and pydantic-ai with the worker (or the first output schema
checked): they were most of every `atrium serve` and `atrium worker` start. Each check runs in
a new interpreter, since this one has imported everything; the features themselves are the
runtime's and agents' tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.processes import atrium_env

# In order: each stage may import what the earlier ones did not.
_STAGES = """
import asyncio, json, sys

HEAVY = ("anthropic", "openai", "mcp", "fastmcp", "pydantic_ai", "pydantic_ai.mcp")
seen = {}

def stage(name):
    seen[name] = sorted(module for module in HEAVY if module in sys.modules)

import atrium.app
from atrium.settings import Settings
stage("import atrium.app")

atrium.app.create_app(Settings(run_worker=False))
stage("app without worker")

app = atrium.app.create_app(Settings())
stage("app with worker")

models = app.state.workers.runtime.models
for name in ("anthropic:claude-sonnet-4-5", "openai-compatible:llama3"):
    asyncio.run(models.load(name))  # what a run does before it builds its model
    stage(name)
    models.resolve(name)

from atrium.agents.tool_config import McpServerTool
from atrium.runtime.observed_calls import ToolCallLog

async def mcp_toolsets():
    tool = McpServerTool(type="mcp", server_label="docs", server_url="http://127.0.0.1:9/mcp")
    async with app.state.workers.runtime.mcp.toolsets([tool], ToolCallLog(None)) as built:
        assert len(built) == 1

asyncio.run(mcp_toolsets())
stage("MCP toolset")
print(json.dumps(seen))
"""


def test_heavy_libraries_are_imported_on_first_use(tmp_path: Path) -> None:
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}",
        ATRIUM_ANTHROPIC_API_KEY="sk-ant-test",
        ATRIUM_LLM_BASE_URL="http://127.0.0.1:9/v1",
    )
    done = subprocess.run(
        [sys.executable, "-c", _STAGES], env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-4000:]
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == {
        "import atrium.app": [],
        "app without worker": [],
        "app with worker": ["pydantic_ai"],
        "anthropic:claude-sonnet-4-5": ["anthropic", "pydantic_ai"],
        "openai-compatible:llama3": ["anthropic", "openai", "pydantic_ai"],
        "MCP toolset": ["anthropic", "fastmcp", "mcp", "openai", "pydantic_ai", "pydantic_ai.mcp"],
    }


def test_the_client_commands_start_without_the_servers_settings() -> None:
    """`atrium run`, `atrium runs …` and the other client commands talk HTTP: importing the
    command line must not import the server's settings (pydantic-settings and the settings
    module were a fifth of their start)."""
    code = "import sys, atrium.cli; print(sorted(m for m in sys.modules if 'settings' in m))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=atrium_env(), check=True
    )
    assert done.stdout.strip() == "[]", done.stdout
