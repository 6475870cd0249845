"""Evals in Chromium against a real server: an eval of two versions of one agent (run with the
Python client on the offline model) listed on the Evals page, its side-by-side table with a
totals row, and its deletion after a confirm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atrium.client import Client
from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in


async def test_evals_list_table_and_delete(page: Any, server: Server, tmp_path: Path) -> None:
    key = server.new_key()
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text(
        json.dumps(
            {"id": "greet", "prompt": "hello", "checks": [{"type": "contains", "value": "hello"}]}
        )
        + "\n"
        + json.dumps(
            {
                "id": "json",
                "prompt": 'json please\noutput {"answer": "42"}',
                "checks": [{"type": "json_schema", "schema": {"type": "object"}}],
            }
        )
        + "\n"
    )
    with Client(server.url, key) as atrium:
        agent_id = atrium.agents.create("Evaluated", config={"tools": []}).agent_id
        atrium.agents.update(
            agent_id,
            config={
                "output_schema": {"type": "object", "properties": {"answer": {"type": "string"}}}
            },
        )
        found = atrium.evals.run(dataset, agents=[f"{agent_id}@1", f"{agent_id}@2"])
    await sign_in(page, key)
    await page.goto("/dashboard/#/evals")
    await expect(page.get_by_role("heading", level=1, name="Evals")).to_be_visible()
    row = page.locator("table.evals tbody tr")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("cases.jsonl")
    await row.get_by_role("link", name=found.eval_id).click()

    table = page.locator("table.eval-table")
    await expect(table.locator("thead")).to_contain_text(f"{agent_id}@1 (v1)")
    await expect(table.locator("thead")).to_contain_text(f"{agent_id}@2 (v2)")
    greet = table.locator("tr[data-case='greet']")
    await expect(greet.locator("td").nth(0)).to_have_text("pass")
    await expect(greet.locator("td").nth(3)).to_have_text("FAIL contains")
    json_row = table.locator("tr[data-case='json']")
    await expect(json_row.locator("td").nth(0)).to_have_text("FAIL json_schema")
    await expect(json_row.locator("td").nth(3)).to_have_text("pass")
    totals = table.locator("tfoot tr")
    await expect(totals.locator("td").nth(0)).to_have_text("1/2 (50%)")
    await expect(totals.locator("td").nth(3)).to_have_text("1/2 (50%)")
    await expect(totals.locator("td").nth(2)).to_contain_text("p50")
    await shot(page, "eval")

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete eval").click()
    await expect(page.get_by_role("heading", level=1, name="Evals")).to_be_visible()
    await expect(page.get_by_text("No evals yet.", exact=False)).to_be_visible()
