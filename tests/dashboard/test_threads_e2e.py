"""The threads list and a thread's page in Chromium against a real server: a thread with two
runs of the offline model (one whose function tool failed), its conversation and its runs,
continuing it, forking it at its first run and deleting the fork."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from tests.dashboard.conftest import PHONE, Server, shot
from tests.dashboard.test_e2e import api, expect, sign_in

RUNS = "/api/v1/public/agent/runs"
THREADS = "/api/v1/public/threads"
LOOKUP = {
    "type": "function",
    "name": "lookup",
    "on_error": "return",
    "parameters": {"type": "object", "properties": {"word": {"type": "string"}}},
}


def _settled(http: httpx.Client, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        run: dict[str, Any] = http.get(f"{RUNS}/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.1)


def _seed(server: Server, key: str) -> tuple[str, str, str]:
    """A thread with metadata: a run of the offline model, then a run whose function call is
    answered with an error the model reads. Its id, and the two runs'."""
    with api(server, key) as http:
        thread = http.post(THREADS, json={"metadata": {"customer": "acme"}}).json()
        created = http.post(RUNS, json={"prompt": "Name a colour", "thread_id": thread["id"]})
        assert created.status_code == 201, created.text
        first = created.json()
        assert _settled(http, first["run_id"])["status"] == "completed"
        agent = http.post(
            "/v1/agents",
            json={"name": "Librarian", "config": {"model": "atrium:offline", "tools": [LOOKUP]}},
        ).json()
        second = http.post(
            RUNS,
            json={
                "prompt": 'call lookup {"word": "atrium"}',
                "thread_id": thread["id"],
                "agent_id": agent["agent_id"],
            },
        ).json()
        waiting = _settled(http, second["run_id"])
        (call,) = waiting["required_action"]["tool_calls"]
        output = {"tool_call_id": call["id"], "output": "no such word", "is_error": True}
        answer = {"tool_outputs": [output]}
        assert http.post(f"{RUNS}/{second['run_id']}/actions", json=answer).status_code == 200
        assert _settled(http, second["run_id"])["status"] == "completed"
    return thread["id"], first["run_id"], second["run_id"]


async def test_a_thread_page_shows_its_conversation_and_runs_and_forks_and_deletes(
    page: Any, server: Server
) -> None:
    key = server.new_key()
    thread_id, first, second = await asyncio.to_thread(_seed, server, key)
    await sign_in(page, key)

    await page.get_by_role("link", name="Threads", exact=True).click()
    await expect(page.get_by_role("heading", level=1, name="Threads")).to_be_visible()
    row = page.locator("table.threads tbody tr")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("customer=acme")
    await expect(row.locator("td[data-label='Status']")).to_have_text("idle")
    await expect(row.locator("td[data-label='Last run']")).to_contain_text(second)
    # The metadata filter goes to the API as metadata[customer]=…
    await page.get_by_label("Metadata").fill("customer=globex")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("No threads match these filters.")).to_be_visible()
    await page.get_by_label("Metadata").fill("customer=acme")
    await page.get_by_role("button", name="Filter").click()
    await expect(row).to_have_count(1)

    await row.get_by_role("link", name=thread_id).click()
    await expect(page.get_by_role("heading", level=1, name="Thread")).to_be_visible()
    messages = page.get_by_role("list", name="Conversation").locator("li.message")
    await expect(messages).to_have_count(8)
    roles = [await item.get_attribute("data-role") for item in await messages.all()]
    assert roles == ["user", "assistant", "tool", "assistant"] * 2
    await expect(messages.nth(0)).to_contain_text("Name a colour")
    await expect(messages.nth(0).get_by_role("link", name=first)).to_be_visible()
    await expect(messages.nth(1).get_by_role("list", name="Tool calls")).to_contain_text(
        "write_artifact("
    )
    failed = messages.nth(6)
    await expect(failed).to_contain_text("lookup")
    await expect(failed.locator(".badge")).to_have_text("failed")
    await expect(failed).to_contain_text("no such word")
    await expect(messages.nth(7)).to_contain_text("Offline answer (turn 2)")
    runs = page.locator("table.thread-runs tbody tr")
    await expect(runs).to_have_count(2)
    await expect(runs.nth(0)).to_contain_text(second)
    meta = page.locator("dl.meta")
    await expect(meta).to_contain_text("customer=acme")
    await shot(page, "desktop-thread")

    # Fork at the first run: the fork's page says where it came from and holds its history.
    await page.get_by_label("Up to run").select_option(first)
    await page.get_by_role("button", name="Fork thread").click()
    await page.wait_for_url(lambda url: "#/threads/thr_" in url and thread_id not in url)
    fork_id = page.url.rsplit("/", 1)[-1]
    await expect(page.locator("dl.meta")).to_contain_text(f"{thread_id} at {first}")
    await expect(messages).to_have_count(4)
    await expect(messages.nth(0)).to_contain_text("copied from the original thread")

    # Continue the fork: the run's page opens, and the fork then shows its turn 2.
    await page.get_by_role("textbox", name="Prompt", exact=True).fill("Name a fruit of that colour")
    await page.get_by_role("button", name="Send").click()
    await page.wait_for_url("**/dashboard/#/runs/run_*")
    await expect(page.locator(".run-status .badge")).to_have_text("completed")
    await page.locator("dl.meta").get_by_role("link", name=fork_id).click()
    await expect(messages).to_have_count(8)
    await expect(messages.nth(7)).to_contain_text("Offline answer (turn 2) to: Name a fruit")

    # Delete the fork (the confirm dialog accepted): back to the list, without it.
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete thread").click()
    await page.wait_for_url("**/dashboard/#/threads")
    await expect(page.locator("table.threads tbody tr")).to_have_count(1)
    await expect(page.locator("table.threads")).not_to_contain_text(fork_id)
    with api(server, key) as http:
        assert http.get(f"{THREADS}/{fork_id}").status_code == 404
        assert http.get(f"{THREADS}/{thread_id}").json()["counts"]["messages"] == 8


async def test_the_thread_page_fits_a_phone(page: Any, server: Server) -> None:
    key = server.new_key()
    thread_id, _, _ = await asyncio.to_thread(_seed, server, key)
    await page.set_viewport_size(PHONE)
    await sign_in(page, key)
    await page.goto(f"/dashboard/#/threads/{thread_id}")
    messages = page.get_by_role("list", name="Conversation").locator("li.message")
    await expect(messages).to_have_count(8)
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    await shot(page, "phone-thread")


def _three_runs(server: Server, key: str) -> str:
    with api(server, key) as http:
        thread = http.post(THREADS, json={}).json()
        for word in ("one", "two", "three"):
            run = http.post(RUNS, json={"prompt": f"Prompt {word}", "thread_id": thread["id"]})
            assert _settled(http, run.json()["run_id"])["status"] == "completed"
    return str(thread["id"])


async def test_compact_shows_the_summary_and_fades_what_it_covers(
    page: Any, server: Server
) -> None:
    key = server.new_key()
    thread_id = await asyncio.to_thread(_three_runs, server, key)
    await sign_in(page, key)
    await page.goto(f"/dashboard/#/threads/{thread_id}")
    messages = page.get_by_role("list", name="Conversation").locator("li.message")
    await expect(messages).to_have_count(12)
    await page.get_by_role("button", name="Compact").click()
    await expect(page.locator("#toast")).to_contain_text("Compacted through run_")
    await expect(messages).to_have_count(13)
    summary = messages.nth(8)
    assert await summary.get_attribute("data-role") == "summary"
    await expect(summary).to_contain_text("Prompt one")
    await expect(summary).to_contain_text("in place of the items marked compacted")
    await expect(page.locator("li.message.compacted")).to_have_count(8)
    await expect(messages.nth(0).locator(".compacted-badge")).to_have_text("compacted")
    await shot(page, "desktop-thread-compacted")
    await page.get_by_role("button", name="Compact").click()
    await expect(page.locator("#toast")).to_contain_text("Nothing to compact")
