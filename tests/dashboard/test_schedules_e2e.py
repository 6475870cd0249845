"""The schedules pages in Chromium against a real server: create a schedule with the form (a
bad time zone shown at its field first), its page with the next fire times in its zone, fire it
by hand (the firing links its run), pause it, and delete it."""

from __future__ import annotations

import re
from typing import Any

from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in


async def test_create_fire_pause_and_delete_a_schedule(page: Any, server: Server) -> None:
    await sign_in(page, server.new_key())
    await page.get_by_role("link", name="Schedules", exact=True).click()
    await expect(page.get_by_role("heading", level=1, name="Schedules")).to_be_visible()
    await expect(page.get_by_text("No schedules yet.")).to_be_visible()

    await page.get_by_label("Prompt").fill("Write the morning report")
    await page.get_by_label("Cron").fill("30 7 * * *")
    await page.get_by_label("Time zone").fill("Europe/Atlantis")
    await page.get_by_role("button", name="Create schedule").click()
    zone = page.get_by_label("Time zone")
    await expect(zone).to_have_attribute("aria-invalid", "true")
    await expect(page.locator(".field-error").filter(has_text="IANA")).to_be_visible()

    await zone.fill("Asia/Tokyo")
    await page.get_by_label("If the last run is still going").select_option("cancel_previous")
    await page.get_by_role("button", name="Create schedule").click()
    await expect(page.get_by_role("heading", level=1, name="Schedule sch_")).to_be_visible()
    upcoming = page.get_by_role("list", name="Next fire times").locator("li")
    await expect(upcoming).to_have_count(5)
    await expect(upcoming.first).to_contain_text("07:30:00+09:00 (Asia/Tokyo)")
    await expect(page.locator("dl.meta")).to_contain_text("cancel_previous")
    await expect(page.get_by_text("No firings yet.")).to_be_visible()

    await page.get_by_role("button", name="Fire now").click()
    row = page.locator("table.firings tbody tr")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("fired by hand")
    run_link = row.locator("td[data-label='Run or reason'] a")
    await expect(run_link).to_contain_text("run_")
    await shot(page, "schedule")

    await page.get_by_role("button", name="Pause").click()
    await expect(page.get_by_role("button", name="Resume")).to_be_visible()
    await expect(page.locator("dl.meta")).to_contain_text("paused")

    await run_link.click()
    await expect(page).to_have_url(re.compile(r"#/runs/run_"))
    await page.go_back()
    await expect(page.get_by_role("heading", level=1, name="Schedule sch_")).to_be_visible()

    page.once("dialog", lambda dialog: dialog.accept())
    await page.get_by_role("button", name="Delete").click()
    await expect(page.get_by_role("heading", level=1, name="Schedules")).to_be_visible()
    await expect(page.get_by_text("No schedules yet.")).to_be_visible()
