"""A run's page shows its trace as a waterfall: the spans of GET …/runs/{id}/trace (those the
OTLP export sends), one row each under its parent, bars on one time axis, drawn under the
dashboard's CSP (any violation is a console error, which fails the test)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")
RUNS = "/api/v1/public/agent/runs"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


async def _until(http: httpx.AsyncClient, run_id: str, statuses: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        run: dict[str, Any] = (await http.get(f"{RUNS}/{run_id}")).json()
        if run["status"] in statuses:
            return run
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.1)


async def test_a_run_page_shows_the_trace_waterfall(page: Any, server: Server) -> None:
    key = server.new_key()
    async with httpx.AsyncClient(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}
    ) as http:
        agent = (
            await http.post("/v1/agents", json={"name": "Weather", "config": {"tools": [WEATHER]}})
        ).json()
        run = (
            await http.post(
                RUNS,
                json={
                    "prompt": 'Weather?\ncall get_weather {"city": "Paris"}',
                    "agent_id": agent["agent_id"],
                },
            )
        ).json()
        await _until(http, run["run_id"], {"requires_action"})
        answered = await http.post(
            f"{RUNS}/{run['run_id']}/actions",
            json={"tool_outputs": [{"tool_call_id": "offline-call-1", "output": "sunny"}]},
        )
        assert answered.status_code == 200, answered.text
        await _until(http, run["run_id"], {"completed"})
        trace = (await http.get(f"{RUNS}/{run['run_id']}/trace")).json()

    await sign_in(page, key)
    await page.goto(f"/dashboard/#/runs/{run['run_id']}")
    section = page.get_by_role("region", name="Trace")
    rows = section.locator("table.waterfall tbody tr")
    await expect(rows).to_have_count(len(trace["spans"]))
    await expect(section).to_contain_text(f"trace {trace['trace_id']}")
    shown = await rows.evaluate_all(
        """(rows) => rows.map((row) => ({
          id: row.dataset.spanId, kind: row.dataset.kind,
          name: row.querySelector('th').firstChild.textContent,
          depth: row.querySelector('th').className,
          x: Number(row.querySelector('rect').getAttribute('x')),
          width: Number(row.querySelector('rect').getAttribute('width')),
        }))"""
    )
    assert [row["id"] for row in shown] == [span["span_id"] for span in trace["spans"]]
    assert [row["name"] for row in shown] == [
        f"invoke_agent {agent['agent_id']}",
        "execute",
        "chat atrium:offline",
        "execute_tool get_weather",
        "wait",
        "execute",
        "chat atrium:offline",
    ]
    assert [row["depth"].split()[-1] for row in shown] == [
        "depth-0", "depth-1", "depth-2", "depth-2", "depth-1", "depth-1", "depth-2"
    ]  # fmt: skip
    run_bar, first, _, tool, wait, second, _ = shown
    # The run's bar spans the axis; the wait lies between the two stretches of execution.
    assert run_bar["x"] == 0 and run_bar["width"] == pytest.approx(1000, abs=1)
    assert first["x"] + first["width"] <= wait["x"] + 1 <= second["x"] + 1
    assert tool["x"] < wait["x"] and tool["x"] + tool["width"] >= wait["x"] + wait["width"] - 1
    # Each bar's tooltip lists its span's attributes.
    title = await rows.nth(3).locator("title").text_content()
    assert "gen_ai.tool.name = get_weather" in (title or "")
    fits = await page.evaluate(
        """() => { const box = document.querySelector('.waterfall-box');
                   return box.scrollWidth <= box.clientWidth; }"""
    )
    assert fits
    await shot(page, "desktop-run-trace")
