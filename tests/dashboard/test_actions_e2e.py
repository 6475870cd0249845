"""The run page of a run that waits for its caller, in headless Chromium: the pending call is
shown with an output box, the answer is sent from the page, and the run completes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")
RUNS = "/api/v1/public/agent/runs"
LOOKUP = {
    "type": "function",
    "name": "lookup",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
}


async def test_a_waiting_run_is_answered_from_its_page(page: Any, server: Server) -> None:
    key = server.new_key()
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as api:
        agent = (
            await api.post("/v1/agents", json={"name": "hitl", "config": {"tools": [LOOKUP]}})
        ).json()
        run = (
            await api.post(
                RUNS,
                json={"prompt": 'call lookup {"word": "dashboard"}', "agent_id": agent["agent_id"]},
            )
        ).json()
    await sign_in(page, key)
    await page.goto(f"/dashboard/#/runs/{run['run_id']}")
    status = page.locator(".run-status .badge")
    await expect(status).to_have_text("requires_action", timeout=20_000)
    waiting = page.get_by_role("region", name="Waiting for you")
    await expect(waiting).to_contain_text("lookup: a function you run")
    await expect(waiting).to_contain_text('"word": "dashboard"')
    await shot(page, "desktop-run-waiting")
    await page.get_by_label("Output of lookup").fill("a page of the dashboard")
    await page.get_by_role("button", name="Send answers").click()
    await expect(status).to_have_text("completed", timeout=20_000)
    await expect(waiting).to_be_hidden()
    await expect(page.get_by_label("Result text")).to_contain_text(
        "lookup returned: a page of the dashboard"
    )
    events = page.get_by_role("list", name="Events")
    await expect(events).to_contain_text("run.requires_action")
