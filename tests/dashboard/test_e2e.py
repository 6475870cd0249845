"""The dashboard in headless Chromium, as a new user meets it: sign in, create an agent, watch a
run live, download its artifact, see the usage chart move; domains and spaces; a phone's width.

Screenshots of every page are saved in tests/dashboard/screenshots/ (desktop and phone).
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import PHONE, Server, shot

pytestmark = pytest.mark.usefixtures("chromium_path")


def expect(locator: Any) -> Any:
    from playwright.async_api import expect as playwright_expect

    # As long as the browser context's own default (conftest `page`): on a loaded 2-core machine
    # a page takes longer than Playwright's 5 s (Swagger UI rendering the whole API document).
    playwright_expect.set_options(timeout=15_000)
    return playwright_expect(locator)


async def sign_in(page: Any, key: str) -> None:
    await page.goto("/dashboard")
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    await expect(page.get_by_role("heading", level=1, name="Runs")).to_be_visible()


def api(server: Server, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"})


def today() -> str:
    return datetime.now(UTC).date().isoformat()


async def start_run(page: Any, prompt: str, agent: str) -> str:
    await page.get_by_role("link", name="Runs", exact=True).click()
    # By role: while the previous run's page is still on screen, its "Prompt"
    # card (a region) and "Prompt text" also carry the label.
    await page.get_by_role("textbox", name="Prompt", exact=True).fill(prompt)
    await page.get_by_label("Agent", exact=True).select_option(label=agent)
    await page.get_by_role("button", name="Start run").click()
    await page.wait_for_url("**/dashboard/#/runs/run_*")
    await expect(page.get_by_role("heading", level=1, name="Run")).to_be_visible()
    return str(page.url.rsplit("/", 1)[-1])


async def test_sign_in_agent_live_run_artifact_and_usage(
    page: Any, server: Server, tmp_path: Path
) -> None:
    key = server.new_key()
    await page.goto("/dashboard")
    assert page.url.endswith("/dashboard/")
    await expect(page.get_by_role("heading", level=1, name="Sign in to atrium")).to_be_visible()
    await shot(page, "desktop-01-sign-in")

    # A wrong key is refused and nothing is shown.
    await page.get_by_label("API key").fill("atr_not-a-real-key-000000000000000000000")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("alert")).to_contain_text("refused")
    await expect(page.get_by_role("navigation", name="Main")).to_be_hidden()

    # The right one, typed and submitted with the keyboard only.
    await page.get_by_label("API key").fill(key)
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    await expect(page.get_by_text("No runs yet")).to_be_visible()
    assert await page.evaluate("sessionStorage.getItem('atrium.apiKey')") == key
    assert await page.evaluate("localStorage.length") == 0

    # Usage before any run: all zero.
    await page.get_by_role("link", name="Usage").click()
    await expect(page.get_by_role("heading", level=1, name="Usage")).to_be_visible()
    runs_today = page.locator(f"svg.chart.runs rect.bar[data-date='{today()}']")
    await expect(runs_today).to_have_attribute("data-value", "0")

    # Agents: create two, edit one.
    await page.get_by_role("link", name="Agents").click()
    await expect(page.get_by_role("heading", level=1, name="Agents")).to_be_visible()
    await page.get_by_label("Name").fill("Researcher")
    await page.get_by_label("Description").fill("Digs through notes")
    await page.get_by_label("Temperature").fill("0.3")
    await page.get_by_role("button", name="Create agent").click()
    await expect(page.get_by_role("table").get_by_text("Researcher", exact=True)).to_be_visible()
    await page.get_by_label("Name").fill("Slow writer")
    await page.get_by_label("Model").fill("openai-compatible:slow")
    for tool in ("write_artifact", "list_artifacts", "read_artifact"):
        await page.get_by_label(tool).uncheck()
    await page.get_by_role("button", name="Create agent").click()
    await expect(page.get_by_role("table").get_by_text("Slow writer", exact=True)).to_be_visible()
    # A refused value names the field.
    await page.get_by_label("Name").fill("No provider")
    await page.get_by_label("Model").fill("gpt4")
    await page.get_by_role("button", name="Create agent").click()
    await expect(page.get_by_role("alert")).to_contain_text("config.model")
    await expect(page.get_by_label("Model")).to_have_attribute("aria-invalid", "true")
    await expect(page.get_by_label("Model")).to_be_focused()
    await shot(page, "desktop-03-agents")

    await page.get_by_role("link", name="Edit Researcher").click()
    await expect(page.get_by_role("heading", level=1, name="Edit agent")).to_be_visible()
    await page.get_by_label("Description").fill("Digs through notes, carefully")
    await shot(page, "desktop-04-agent-edit")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_text("Digs through notes, carefully")).to_be_visible()

    # A run on the slow model, watched live: running with partial text, then completed.
    run_id = await start_run(page, "Write a haiku about rain", "Slow writer")
    status = page.locator(".run-status .badge")
    output = page.get_by_label("Result text")
    await expect(status).to_have_text("running", timeout=20_000)
    await expect(output).to_contain_text("word3", timeout=20_000)
    await expect(page.get_by_text("● Live")).to_be_visible()
    assert await status.inner_text() == "running"  # text arrived while the run was still going
    assert "word30" not in await output.inner_text()
    await shot(page, "desktop-05-run-live")
    await expect(status).to_have_text("completed", timeout=30_000)
    await expect(output).to_contain_text("word30")
    await expect(page.get_by_text("Stream ended")).to_be_visible()
    events = page.get_by_role("list", name="Events")
    await expect(events).to_contain_text("run.started")
    await expect(events).to_contain_text("message.delta")
    await expect(events).to_contain_text("run.completed")
    assert await events.locator("li").count() >= 5
    credits_box = page.get_by_role("region", name="Credits")
    await expect(credits_box).to_contain_text("Output tokens")

    # A run of the offline agent writes answer.md: download it.
    run_id_2 = await start_run(page, "Name three rivers", "Researcher")
    assert run_id_2 != run_id
    await expect(status).to_have_text("completed", timeout=30_000)
    download_button = page.get_by_role("button", name="Download answer.md")
    await expect(download_button).to_be_visible()
    await expect(output).to_contain_text("Offline answer")
    await shot(page, "desktop-06-run-completed")
    async with page.expect_download() as downloaded:
        await download_button.click()
    download = await downloaded.value
    saved = tmp_path / "answer.md"
    await download.save_as(saved)
    assert download.suggested_filename == "answer.md"
    assert "Prompt: Name three rivers" in saved.read_text()

    # The runs list shows both, finished.
    await page.get_by_role("link", name="Runs", exact=True).click()
    rows = page.locator("table tbody tr")
    await expect(rows).to_have_count(2)
    await expect(page.get_by_role("link", name=run_id)).to_be_visible()
    await expect(page.locator("tbody .badge.status-completed")).to_have_count(2)
    await shot(page, "desktop-02-runs")
    assert await page.evaluate(OVERFLOW) <= 0, "the runs list scrolls sideways"

    # Usage now counts both runs today, and filters by agent.
    await page.get_by_role("link", name="Usage").click()
    await expect(runs_today).to_have_attribute("data-value", "2")
    credits_today = page.locator(f"svg.chart.credits rect.bar[data-date='{today()}']")
    assert float(await credits_today.get_attribute("data-value") or 0) > 0
    totals = page.get_by_label("Totals")
    await expect(totals).to_contain_text("Runs2")
    await shot(page, "desktop-07-usage")
    await page.get_by_label("Agent", exact=True).select_option(label="Researcher")
    await page.get_by_role("button", name="Show").click()
    await expect(runs_today).to_have_attribute("data-value", "1")
    assert "agent=agt_" in page.url

    # The runs list is live: a new run shows up running; cancelled from its page, it says so.
    run_id_3 = await start_run(page, "A long story", "Slow writer")
    await page.get_by_role("link", name="Runs", exact=True).click()
    row = page.locator("tbody tr").filter(has=page.get_by_role("link", name=run_id_3))
    await expect(row.locator(".badge")).to_have_text("running", timeout=20_000)
    await row.get_by_role("link", name=run_id_3).click()
    await page.get_by_role("button", name="Cancel run").click()
    await expect(status).to_have_text("cancelled", timeout=20_000)
    await expect(events).to_contain_text("run.cancelled")
    await page.get_by_role("link", name="Runs", exact=True).click()
    await expect(row.locator(".badge")).to_have_text("cancelled")

    # Delete an agent (the browser's confirm dialog is accepted).
    await page.get_by_role("link", name="Agents").click()
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete Slow writer").click()
    await expect(page.get_by_role("table").get_by_text("Slow writer", exact=True)).to_have_count(0)
    await expect(page.get_by_role("table").get_by_text("Researcher", exact=True)).to_be_visible()

    # Sign out forgets the key.
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_label("API key")).to_be_visible()
    assert await page.evaluate("sessionStorage.getItem('atrium.apiKey')") is None


async def test_domains_and_spaces(page: Any, server: Server) -> None:
    key = server.new_key()
    with api(server, key) as http:
        for index in range(12):
            made = http.post("/api/v1/domains", data={"name": f"site{index:02d}.example.org"})
            assert made.status_code == 201, made.text
    await sign_in(page, key)

    await page.get_by_role("link", name="Domains").click()
    await expect(page.get_by_role("heading", level=1, name="Domains")).to_be_visible()
    await page.get_by_label("Name").fill("Shop.Example.COM")
    await page.get_by_label("Index page").fill("https://example.com/welcome")
    await page.get_by_role("button", name="Create domain").click()
    await expect(page.get_by_role("link", name="shop.example.com", exact=True)).to_be_visible()
    await expect(page.get_by_text("13 in all")).to_be_visible()

    # Pagination: 10 per page, 2 pages.
    await page.get_by_label("Per page").select_option("10")
    await expect(page.locator("table tbody tr")).to_have_count(10)
    await expect(page.get_by_role("navigation", name="Pagination")).to_contain_text("Page 1 of 2")
    await page.get_by_role("button", name="Next ›").click()
    await expect(page.get_by_role("navigation", name="Pagination")).to_contain_text("Page 2 of 2")
    await expect(page.locator("table tbody tr")).to_have_count(3)

    # Sort by name, ascending.
    await page.get_by_label("Sort by").select_option("name")
    await page.get_by_label("Order").select_option("asc")
    await expect(page.locator("table tbody tr").first).to_contain_text("shop.example.com")
    await page.get_by_label("Per page").select_option("25")
    await expect(page.locator("table tbody tr").first).to_contain_text("shop.example.com")
    await expect(page.locator("table tbody tr").nth(1)).to_contain_text("site00.example.org")

    # Search.
    await page.get_by_label("Search", exact=True).fill("site1")
    await page.get_by_label("Search", exact=True).press("Enter")
    await expect(page.locator("table tbody tr")).to_have_count(2)
    await expect(page.get_by_role("navigation", name="Pagination")).to_contain_text(
        "Page 1 of 1 · 1–2 of 2"
    )
    await shot(page, "desktop-08-domains")

    # A bad name is refused, naming the field.
    await page.get_by_label("Name").fill("not a host")
    await page.get_by_role("button", name="Create domain").click()
    await expect(page.get_by_role("alert")).to_contain_text("name")
    await expect(page.get_by_label("Name")).to_have_attribute("aria-invalid", "true")

    # Edit and delete.
    await page.get_by_label("Search", exact=True).fill("shop")
    await page.get_by_label("Search", exact=True).press("Enter")
    await page.get_by_role("link", name="Edit shop.example.com").click()
    await expect(page.get_by_role("heading", level=1, name="Edit domain")).to_be_visible()
    await page.get_by_label("404 page").fill("https://example.com/missing")
    await shot(page, "desktop-09-domain-edit")
    await page.get_by_role("button", name="Save changes").click()
    await expect(
        page.get_by_role("cell", name="https://example.com/missing", exact=True)
    ).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete shop.example.com").click()
    await expect(page.get_by_text("No domains match")).to_be_visible()
    with api(server, key) as http:
        assert http.get("/api/v1/domains").json()["meta"]["total"] == 12

    # Spaces: create, edit, delete.
    await page.get_by_role("link", name="Spaces").click()
    await expect(page.get_by_role("heading", level=1, name="Spaces")).to_be_visible()
    for name, color in (("Marketing", "3 · Pink"), ("Research", "5 · Green")):
        await page.get_by_label("Name").fill(name)
        await page.get_by_label("Color").select_option(label=color)
        await page.get_by_role("button", name="Create space").click()
        await expect(page.get_by_role("cell", name=name, exact=True)).to_be_visible()
    await expect(page.get_by_role("cell", name="3 · Pink", exact=True)).to_be_visible()
    await shot(page, "desktop-10-spaces")
    await page.get_by_role("link", name="Edit Marketing").click()
    await page.get_by_label("Name").fill("Growth")
    await page.get_by_label("Color").select_option(label="6 · Teal")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("cell", name="Growth", exact=True)).to_be_visible()
    await expect(page.get_by_role("cell", name="6 · Teal", exact=True)).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete Research").click()
    await expect(page.get_by_role("cell", name="Research", exact=True)).to_have_count(0)
    with api(server, key) as http:
        names = [space["name"] for space in http.get("/api/v1/spaces").json()["data"]]
    assert names == ["Growth"]

    # A key that stops working (revoked) signs the tab out at the next call.
    await page.evaluate(
        "sessionStorage.setItem('atrium.apiKey', 'atr_revoked-0000000000000000000')"
    )
    await page.get_by_role("link", name="Domains").click()
    await expect(page.get_by_role("alert")).to_contain_text("refused")
    await expect(page.get_by_label("API key")).to_be_visible()
    await expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
    assert await page.evaluate("sessionStorage.getItem('atrium.apiKey')") is None


async def _seed(server: Server, key: str) -> str:
    """An agent, a finished run, two domains and a space, made through the API."""
    async with httpx.AsyncClient(
        base_url=server.url, headers={"Authorization": f"Bearer {key}"}
    ) as http:
        agent = (await http.post("/v1/agents", json={"name": "Researcher"})).json()
        run = (
            await http.post(
                "/api/v1/public/agent/runs",
                json={"prompt": "Summarise the notes", "agent_id": agent["agent_id"]},
            )
        ).json()
        deadline = time.monotonic() + 30
        url = f"/api/v1/public/agent/runs/{run['run_id']}"
        while (await http.get(url)).json()["status"] in ("queued", "running"):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        for name in ("docs.example.net", "go.example.net"):
            await http.post(
                "/api/v1/domains", data={"name": name, "index_page": "https://example.net/"}
            )
        await http.post("/api/v1/spaces", data={"name": "Marketing", "color": "2"})
    return str(run["run_id"])


UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea, button')]
  .filter((el) => el.type !== 'hidden' && el.offsetParent !== null)
  .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                  && !(el.tagName === 'BUTTON' && el.textContent.trim()))
  .map((el) => el.outerHTML)"""
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


async def test_every_page_at_phone_width(page: Any, server: Server) -> None:
    """Readable on a phone: no sideways scrolling, every control labelled, screenshots."""
    key = server.new_key()
    run_id = await _seed(server, key)
    await page.set_viewport_size(PHONE)
    await page.goto("/dashboard")
    await expect(page.get_by_role("heading", level=1, name="Sign in to atrium")).to_be_visible()
    assert await page.evaluate(OVERFLOW) <= 0
    await shot(page, "phone-00-sign-in")
    await sign_in(page, key)
    pages = [
        ("runs", "Runs"),
        (f"runs/{run_id}", "Run"),
        ("agents", "Agents"),
        ("usage", "Usage"),
        ("domains", "Domains"),
        ("spaces", "Spaces"),
    ]
    for number, (route, heading) in enumerate(pages, start=1):
        await page.goto(f"/dashboard/#/{route}")
        await expect(page.get_by_role("heading", level=1, name=heading, exact=True)).to_be_visible()
        if route.startswith("runs/"):
            await expect(page.locator(".run-status .badge")).to_have_text("completed")
            await expect(page.get_by_text("Stream ended")).to_be_visible()
        await expect(page.locator("main")).to_have_attribute("aria-busy", "false")
        assert await page.evaluate(UNLABELLED) == [], route
        assert await page.evaluate(OVERFLOW) <= 0, f"{route} scrolls sideways on a phone"
        await shot(
            page, f"phone-{number:02d}-{route.split('/')[0]}{'-detail' if '/' in route else ''}"
        )

    # Keyboard: the skip link comes first and the main navigation is reachable with Tab.
    await page.goto("/dashboard/#/runs")
    await page.reload()
    await expect(page.get_by_role("heading", level=1, name="Runs")).to_be_visible()
    await page.keyboard.press("Tab")
    assert await page.evaluate("document.activeElement.textContent") == "Skip to content"
    await page.keyboard.press("Enter")
    assert await page.evaluate("document.activeElement.id") == "main"
    assert page.url.endswith("#/runs")
    await page.reload()
    await expect(page.get_by_role("heading", level=1, name="Runs")).to_be_visible()
    for _ in range(8):
        await page.keyboard.press("Tab")
        if await page.evaluate("document.activeElement.textContent") == "Agents":
            break
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("heading", level=1, name="Agents")).to_be_focused()
