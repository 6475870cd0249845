"""The runs list and a run's page at a laptop's width (1280 px), with a dozen runs of long
prompts and answers and a failed one: the table fits, the sign-in notice covers no row, a failed
run says why, and every timestamp has the same format."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import DESKTOP, SCREENSHOTS, Server, shot
from tests.dashboard.test_e2e import expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")
RUNS = "/api/v1/public/agent/runs"
LONG_PROMPT = "Compare the rainfall of every European capital over the last decade, " * 5
# Structured output the slow model answers with a call its schema refuses, on every retry.
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}


@dataclass
class Seeded:
    key: str
    completed: str
    failed: str


async def _finished(http: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        run: dict[str, Any] = (await http.get(f"{RUNS}/{run_id}")).json()
        if run["status"] not in ("queued", "running"):
            return run
        assert time.monotonic() < deadline, run
        await asyncio.sleep(0.1)


@pytest.fixture(scope="module")
async def seeded(server: Server) -> AsyncIterator[Seeded]:
    """An account with a dozen runs of the offline model on long prompts, and one run that
    failed (its model answers outside the output schema)."""
    key = server.new_key()
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        strict = (
            await http.post(
                "/v1/agents",
                json={
                    "name": "Strict reporter",
                    "config": {"model": "openai-compatible:slow", "output_schema": ANSWER_SCHEMA},
                },
            )
        ).json()
        failing = (
            await http.post(
                RUNS,
                json={"prompt": 'output {"verdict": 1}', "agent_id": strict["agent_id"]},
            )
        ).json()
        completed = [
            (await http.post(RUNS, json={"prompt": f"{index}. {LONG_PROMPT}"})).json()
            for index in range(12)
        ]
        for run in completed:
            assert (await _finished(http, run["run_id"]))["status"] == "completed"
        failed = await _finished(http, failing["run_id"])
        assert failed["status"] == "failed", failed
        assert failed["error"]["code"] and failed["error"]["message"]
    yield Seeded(key=key, completed=completed[-1]["run_id"], failed=failing["run_id"])


TABLE_FIT = """() => {
  const table = document.querySelector('table.runs');
  const box = table.parentElement.getBoundingClientRect();
  const result = [...table.querySelectorAll('thead th')].at(-1).getBoundingClientRect();
  return {
    scrollWidth: table.scrollWidth,
    containerWidth: table.parentElement.clientWidth,
    tableRight: table.getBoundingClientRect().right,
    containerRight: box.right,
    resultLeft: result.left,
    resultRight: result.right,
    viewport: document.documentElement.clientWidth,
  };
}"""


async def test_the_runs_table_fits_a_laptop_screen(
    page: Any, server: Server, seeded: Seeded
) -> None:
    assert DESKTOP["width"] == 1280
    await sign_in(page, seeded.key)
    rows = page.locator("table.runs tbody tr")
    await expect(rows).to_have_count(13)
    fit = await page.evaluate(TABLE_FIT)
    assert fit["scrollWidth"] <= fit["containerWidth"], fit
    assert fit["tableRight"] <= fit["containerRight"] + 0.5, fit
    assert fit["resultRight"] <= fit["containerRight"] + 0.5, fit
    assert fit["resultRight"] - fit["resultLeft"] >= 100, "the Result column is squeezed"
    # Each cut cell says what it cuts: the whole text is its tooltip.
    answer = rows.nth(0).locator("td[data-label='Result']")
    await expect(answer).to_contain_text("Offline answer")
    assert "Offline answer" in (await answer.get_attribute("title") or "")
    prompt = rows.nth(0).locator("td[data-label='Prompt']")
    assert (await prompt.get_attribute("title") or "").strip().endswith(LONG_PROMPT.strip())
    await shot(page, "desktop-runs-1280")


async def test_the_sign_in_notice_covers_no_row(page: Any, server: Server, seeded: Seeded) -> None:
    await sign_in(page, seeded.key)
    notice = page.locator("#toast.visible")
    await expect(notice).to_have_text(re.compile("^Signed in as "))
    await expect(page.locator("table.runs tbody tr")).to_have_count(13)
    covered = await page.evaluate(
        """() => {
          const box = document.getElementById('toast').getBoundingClientRect();
          const targets = [...document.querySelectorAll(
            'main h1, main form, main .toolbar, table.runs thead, table.runs tbody tr')];
          const within = (r) => r.bottom > 0 && r.top < window.innerHeight;
          return targets.filter((el) => {
            const r = el.getBoundingClientRect();
            return within(r) && r.left < box.right && box.left < r.right
              && r.top < box.bottom && box.top < r.bottom;
          }).map((el) => el.tagName + ' ' + el.textContent.slice(0, 40));
        }"""
    )
    assert covered == []
    await page.screenshot(path=str(SCREENSHOTS / "desktop-runs-signed-in.png"))


async def test_a_failed_run_shows_its_error_not_an_empty_result(
    page: Any, server: Server, seeded: Seeded
) -> None:
    await sign_in(page, seeded.key)
    await page.goto(f"/dashboard/#/runs/{seeded.failed}")
    await expect(page.locator(".run-status .badge")).to_have_text("failed")
    await expect(page.get_by_text("Stream ended")).to_be_visible()
    error = page.get_by_role("region", name="Error")
    await expect(error).to_contain_text("OUTPUT_INVALID")
    await expect(error).to_contain_text("output")
    await expect(page.get_by_role("region", name="Result")).to_have_count(0)
    await expect(page.get_by_label("Result text")).to_be_hidden()
    await shot(page, "desktop-run-failed")

    # The runs list names the code too.
    await page.get_by_role("link", name="Runs", exact=True).click()
    row = page.locator("tbody tr").filter(has=page.get_by_role("link", name=seeded.failed))
    await expect(row.locator("td[data-label='Result']")).to_contain_text("OUTPUT_INVALID")


# Digits and words collapsed: "27 Nov 2026, 14:05:33" and "3 Sept 2026, 09:00:00" have the
# same shape, "27 Nov, 14:05" or "14:05:33" another.
SHAPES = """() => [...document.querySelectorAll('main time')].map((el) => el.textContent
  .replace(/[0-9]+/g, '9').replace(/[^\\s\\d.,:/-]+/g, 'a'))"""


async def test_every_timestamp_has_one_format(page: Any, server: Server, seeded: Seeded) -> None:
    await sign_in(page, seeded.key)
    await expect(page.locator("table.runs tbody tr")).to_have_count(13)
    await expect(page.locator("main .page-header time")).to_have_count(1)
    on_list = await page.evaluate(SHAPES)
    assert len(on_list) == 14  # each run's creation and the list's last update
    await page.goto(f"/dashboard/#/runs/{seeded.completed}")
    await expect(page.get_by_text("Stream ended")).to_be_visible()
    on_run = await page.evaluate(SHAPES)
    assert len(on_run) >= 6  # created, started, finished and the events
    assert len(set(on_list) | set(on_run)) == 1, (on_list, on_run)
