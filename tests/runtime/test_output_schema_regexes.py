"""A catastrophic pattern in an output schema costs a run microseconds: `/healthz` keeps
answering while the run checks its answer (tests/agents/test_output_schema_safety.py has the
schemas refused when written)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest

from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished

CATASTROPHIC = "^(a+)+$"
# 27 characters: Python's backtracking `re` needs seconds to reject it (2.3 s, calibration
# 14 ms), each time the answer is checked.
ANSWER = "a" * 26 + "!"


async def longest_healthz_gap(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str
) -> float:
    """The longest time between two answers of `/healthz`, asked every 10 ms while the run
    goes on (the app, its worker and this test share one event loop: a validation that holds
    it delays every request)."""
    longest = 0.0
    answered = time.perf_counter()
    while True:
        assert (await client.get("/healthz")).status_code == 200
        longest = max(longest, time.perf_counter() - answered)
        answered = time.perf_counter()
        run = (await client.get(f"{RUNS}/{run_id}", headers=auth)).json()
        if run["status"] in {"completed", "failed", "cancelled"}:
            return longest
        await asyncio.sleep(0.01)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string", "pattern": CATASTROPHIC}}},
        {"type": "object", "patternProperties": {CATASTROPHIC: {}}, "additionalProperties": False},
        {"type": "object", "patternProperties": {CATASTROPHIC: {}}, "unevaluatedProperties": False},
        {"type": "object", "propertyNames": {"pattern": CATASTROPHIC}},
    ],
    ids=["pattern", "additionalProperties", "unevaluatedProperties", "propertyNames"],
)
async def test_a_catastrophic_pattern_does_not_hold_the_server(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    schema: dict[str, Any],
) -> None:
    agent_id = await make_agent(tools=[], output_schema=schema)
    answer = {"a": ANSWER} if "properties" in schema else {ANSWER: 1}
    run = await create_run(client, auth, f"output {json.dumps(answer)}", agent_id=agent_id)
    gap = await longest_healthz_gap(client, auth, run["run_id"])
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "OUTPUT_INVALID"
    assert gap < 1.0, f"/healthz went unanswered for {gap:.2f} s while the run validated"
