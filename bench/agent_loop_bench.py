"""CPU per run of the agent loop alone, in this process: no HTTP, no database, no worker.

The floor under the runs benchmark's throughput: every run of the offline model is one pass of
pydantic-ai's agent loop (a model request that calls a tool, the tool, a model request whose
answer streams), and however the rest of atrium is built, a core executes at most
1000 / (CPU ms per run) of those per second. Three figures:

- pydantic-ai alone: `Agent.iter` over a `FunctionModel` that calls a no-op tool and then
  streams four words, every node streamed (what atrium's runtime does), and, for comparison,
  `Agent.run` (no streaming: the cheapest way through the loop);
- atrium's runtime: `Runtime.execute` of the `atrium:offline` model with its three tools and a
  sink that stores nothing, i.e. the pydantic-ai loop plus atrium's event and tool code;
- the same with an MCP server instead (`mcp_echo.py`, fastmcp on loopback, in a process of its
  own) whose `echo` tool the offline script calls once: a run's MCP session (its HTTP client,
  the initialize handshake, the tool list, from cache after the first run, the call, the close)
  on atrium's side;
- a calibration: CPU time of `sum(range(10**6))`, so figures taken on machines of different
  speed (or on one machine on different days) can be compared.

    .venv/bin/python bench/agent_loop_bench.py
    .venv/bin/python bench/agent_loop_bench.py --runs 1000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from harness import calibration_ms, mcp_echo  # this folder: a script's own directory
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.runtime.cancellation import RunCancellation
from atrium.runtime.executor import RunSpec, Runtime
from atrium.runtime.sink import StoredArtifact
from atrium.settings import Settings

_ANSWER = ["The", " answer", " is", " here."]


def _tool_returned(messages: list[ModelMessage]) -> bool:
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(
        isinstance(part, ToolReturnPart) for part in last.parts
    )


async def _respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if not _tool_returned(messages):
        return ModelResponse(parts=[ToolCallPart("note", {"text": "x"}, tool_call_id="t1")])
    return ModelResponse(parts=[TextPart("".join(_ANSWER))])


async def _stream(
    messages: list[ModelMessage], info: AgentInfo
) -> AsyncIterator[str | DeltaToolCalls]:
    if not _tool_returned(messages):
        yield {
            0: DeltaToolCall(name="note", json_args=json.dumps({"text": "x"}), tool_call_id="t1")
        }
        return
    for word in _ANSWER:
        yield word


def _plain_agent() -> Agent[None, str]:
    agent = Agent(FunctionModel(_respond, stream_function=_stream), output_type=str)

    @agent.tool_plain
    def note(text: str) -> str:
        return "noted"

    return agent


class _NullSink:
    """A `RunSink` that keeps nothing: the runtime's own cost without storage."""

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        pass

    def append_text(self, text: str) -> None:
        pass

    async def checkpoint(self) -> bool:
        return False

    async def persist(self) -> None:
        pass

    async def write_artifact(self, *, name: str, content: bytes, mime_type: str) -> None:
        pass

    async def list_artifacts(self) -> list[StoredArtifact]:
        return []

    async def read_artifact(self, name: str) -> StoredArtifact | None:
        return None


async def _cpu_ms_per_run(run: Callable[[], Awaitable[object]], runs: int) -> float:
    for _ in range(min(50, runs)):  # warm-up: lazy imports, schema and validator caches
        await run()
    started = time.process_time()
    for _ in range(runs):
        await run()
    return (time.process_time() - started) / runs * 1000


async def main(runs: int) -> None:
    print(f"calibration: sum(range(10**6)) takes {calibration_ms():.0f} ms of CPU (best of 5)")
    agent = _plain_agent()

    async def iterate() -> object:
        async with agent.iter("hello") as agent_run:
            async for node in agent_run:
                if Agent.is_model_request_node(node) or Agent.is_call_tools_node(node):
                    async with node.stream(agent_run.ctx) as events:
                        async for _event in events:
                            pass
        return agent_run.result

    async def plain() -> object:
        return await agent.run("hello")

    runtime = Runtime(Settings(_env_file=None))  # type: ignore[call-arg]
    config = {
        "model": "atrium:offline",
        "tools": ["write_artifact", "list_artifacts", "read_artifact"],
    }

    async def offline() -> object:
        spec = RunSpec(run_id="run_bench", prompt="hello", config=config, history=[])
        outcome = await runtime.execute(spec, _NullSink(), RunCancellation())
        assert outcome.status == "completed", outcome
        return outcome

    for name, run in (
        ("pydantic-ai Agent.iter, every node streamed", iterate),
        ("pydantic-ai Agent.run, no streaming", plain),
        ("atrium Runtime.execute, atrium:offline, null sink", offline),
    ):
        ms = await _cpu_ms_per_run(run, runs)
        print(f"{name}: {ms:.2f} ms CPU per run = at most {1000 / ms:.0f} runs/s per core")
    await runtime.aclose()

    # The MCP server is on loopback: the outbound rule (docs/design.md#outbound) is lifted for it.
    mcp_runtime = Runtime(Settings(_env_file=None, allow_private_targets=True))  # type: ignore[call-arg]
    with mcp_echo() as url:
        tool = {"type": "mcp", "server_label": "bench", "server_url": url}
        mcp_config = {"model": "atrium:offline", "tools": [tool]}
        prompt = 'hello\ncall bench_echo {"text": "hi"}'

        async def offline_mcp() -> object:
            spec = RunSpec(run_id="run_bench", prompt=prompt, config=mcp_config, history=[])
            outcome = await mcp_runtime.execute(spec, _NullSink(), RunCancellation())
            assert outcome.status == "completed", outcome
            return outcome

        # Fewer runs: each is a few HTTP exchanges with the server, so it takes longer.
        ms = await _cpu_ms_per_run(offline_mcp, max(1, runs // 3))
        name = "atrium Runtime.execute, atrium:offline calling one MCP tool"
        print(f"{name}: {ms:.2f} ms CPU per run")
    await mcp_runtime.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=300, help="measured runs per figure (300)")
    asyncio.run(main(parser.parse_args().runs))
