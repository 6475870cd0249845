"""Memory on the dashboard (Chromium): browse by namespace, search by words and by meaning (the
server has the offline embedder), an item's history naming the run (linked) and tool call, or
the API key, that wrote each version; items and blocks deleted after a confirm."""

from __future__ import annotations

from typing import Any

import pytest

from atrium.client import Client
from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")


async def test_browse_search_and_see_who_wrote_an_item(page: Any, server: Server) -> None:
    key = server.new_key()
    with Client(server.url, key) as atrium:
        atrium.memory.put("users/bob", "drink", {"drink": "latte"})
        agent = atrium.agents.create(
            "keeper", config={"tools": [], "memory": {"read": [[]], "write": [["users"]]}}
        )
        call = 'call memory_write {"namespace": ["users", "alice"], "key": "drink", "value": "tea"}'
        run = atrium.runs.wait(atrium.runs.create(call, agent_id=agent.agent_id).run_id)
        assert run.status == "completed"
        item = atrium.memory.get_by_key("users/alice", "drink")
        atrium.memory.put("users/alice", "drink", "green tea")

    await sign_in(page, key)
    await page.get_by_role("link", name="Memory").click()
    await expect(page.get_by_role("heading", level=1, name="Memory")).to_be_visible()
    rows = page.locator("table.memory tbody tr")
    await expect(rows).to_have_count(2)
    await page.get_by_label("Namespace").fill("users/alice")
    await page.get_by_role("button", name="Show").click()
    await expect(rows).to_have_count(1)
    await page.get_by_label("Search").fill("latte")
    await page.get_by_label("Namespace").fill("")
    await page.get_by_role("button", name="Show").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("users/bob")
    # By meaning: every item with a vector, the nearest first.
    await page.get_by_label("Match").select_option("Meaning")
    await page.get_by_label("Search").fill("a latte please")
    await page.get_by_role("button", name="Show").click()
    await expect(rows).to_have_count(2)
    await expect(rows.first).to_contain_text("users/bob")
    await shot(page, "memory-search-by-meaning")

    await page.goto(f"/dashboard#/memory/{item.item_id}")
    await expect(page.get_by_role("heading", level=1, name="Memory item")).to_be_visible()
    history = page.locator("table.memory-history tbody tr")
    await expect(history).to_have_count(2)
    await expect(history.nth(0)).to_contain_text("API key")
    await expect(history.nth(1)).to_contain_text("offline-call-1")
    await shot(page, "memory-item")
    await history.nth(1).get_by_role("link", name=run.run_id).click()
    await expect(page.get_by_role("heading", level=1, name="Run")).to_be_visible()


async def test_delete_items_after_a_confirm(page: Any, server: Server) -> None:
    key = server.new_key()
    with Client(server.url, key) as atrium:
        kept = atrium.memory.put("users/carol", "drink", "mocha")
        atrium.memory.put("users/dan", "drink", "cortado")
    await sign_in(page, key)
    await page.get_by_role("link", name="Memory").click()
    rows = page.locator("table.memory tbody tr")
    await expect(rows).to_have_count(2)
    # Dismissed: nothing happens.
    page.once("dialog", lambda dialog: dialog.dismiss())
    await page.get_by_role("button", name="Delete users/dan drink").click()
    await expect(rows).to_have_count(2)
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete users/dan drink").click()
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("users/carol")

    await page.goto(f"/dashboard#/memory/{kept.item_id}")
    await expect(page.get_by_role("heading", level=1, name="Memory item")).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete item").click()
    await expect(page.get_by_text("Deleted or expired.")).to_be_visible()
    history = page.locator("table.memory-history tbody tr")
    await expect(history).to_have_count(2)
    await expect(history.nth(0)).to_contain_text("deleted")
    await expect(history.nth(0)).to_contain_text("API key")
    with Client(server.url, key) as atrium:
        assert atrium.memory.list().data == []


async def test_create_and_edit_a_block(page: Any, server: Server) -> None:
    key = server.new_key()
    await sign_in(page, key)
    await page.get_by_role("link", name="Blocks").click()
    await expect(page.get_by_role("heading", level=1, name="Blocks")).to_be_visible()
    await page.get_by_label("Label").fill("persona")
    await page.get_by_label("Text").fill("Terse.")
    await page.get_by_role("button", name="Create block").click()
    await expect(page.get_by_role("heading", level=2, name="persona · version 1")).to_be_visible()
    await page.get_by_label("Text").fill("Terse and kind.")
    await page.get_by_role("button", name="Save block").click()
    await expect(page.get_by_role("heading", level=2, name="persona · version 2")).to_be_visible()
    versions = page.locator("table.block-history tbody tr")
    await expect(versions).to_have_count(2)
    await expect(versions.nth(0)).to_contain_text("API key")
    with Client(server.url, key) as atrium:
        atrium.blocks.update("persona", value="Changed elsewhere.")
    await page.get_by_label("Text").fill("Mine.")
    await page.get_by_role("button", name="Save block").click()
    await expect(page.locator("form").get_by_text("is at version 3")).to_be_visible()
    with Client(server.url, key) as atrium:
        assert atrium.blocks.get("persona").value == "Changed elsewhere."
    await shot(page, "memory-block")

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete block").click()
    await expect(page.get_by_role("heading", level=1, name="Blocks")).to_be_visible()
    await expect(page.get_by_text("No blocks yet.")).to_be_visible()
    with Client(server.url, key) as atrium:
        assert atrium.blocks.list().data == []
