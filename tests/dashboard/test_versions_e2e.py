"""An agent's versions and aliases in Chromium against a real server: the versions an edit
makes, the diff between two, a restore (the form shows the restored config), an alias with a
split (a name that is a version and a bad weight shown at their fields first), and its
deletion; the Usage page of the agent shows its runs by version. The new-run and new-schedule
forms pick a version or an alias of the chosen agent."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import api, expect, sign_in


def _agent_edited_once(server: Server, key: str, name: str) -> str:
    """An agent made through the API and edited once: versions 1 (brief) and 2 (thorough)."""
    with api(server, key) as http:
        created = http.post(
            "/v1/agents", json={"name": name, "config": {"instructions": "Be brief."}}
        )
        agent_id: str = created.json()["agent_id"]
        http.put(f"/v1/agents/{agent_id}", json={"config": {"instructions": "Be thorough."}})
    return agent_id


async def test_versions_diff_restore_and_aliases(page: Any, server: Server) -> None:
    key = server.new_key()
    agent_id = _agent_edited_once(server, key, "Versioned")
    await sign_in(page, key)
    await page.goto(f"/dashboard/#/agents/{agent_id}/edit")
    await expect(page.get_by_role("heading", level=1, name="Edit agent")).to_be_visible()

    rows = page.locator("table.versions tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.first).to_contain_text("live")
    changes = page.get_by_role("list", name="Changes from version 1 to 2")
    await expect(changes).to_contain_text('~ /instructions: "Be brief." → "Be thorough."')

    await page.get_by_role("button", name="Restore version 1").click()
    await expect(rows).to_have_count(3)
    await expect(page.get_by_label("Instructions")).to_have_value("Be brief.")
    await expect(rows.first).to_contain_text("live")
    await expect(rows.first.locator("td[data-label='Restored from']")).to_have_text("1")

    # `v2` names version 2, so it is no alias name: refused at its field.
    alias_name = page.get_by_label("Alias name")
    await alias_name.fill("v2")
    await page.get_by_label("Alias version").fill("3")
    await page.get_by_role("button", name="Save alias").click()
    await expect(alias_name).to_have_attribute("aria-invalid", "true")
    await expect(page.locator(".field-error").filter(has_text="names version 2")).to_be_visible()
    await alias_name.fill("prod")
    await page.get_by_label("Split version", exact=True).fill("2")
    await page.get_by_label("Split weight").fill("1.5")
    await page.get_by_role("button", name="Save alias").click()
    weight = page.get_by_label("Split weight")
    await expect(weight).to_have_attribute("aria-invalid", "true")
    await expect(page.locator(".field-error").filter(has_text="split.weight")).to_be_visible()
    await weight.fill("0.2")
    await page.get_by_role("button", name="Save alias").click()
    alias_row = page.locator("table.aliases tbody tr")
    await expect(alias_row).to_have_count(1)
    await expect(alias_row).to_contain_text("20% to version 2")
    await shot(page, "agent-versions")

    await page.get_by_role("button", name="Delete alias prod").click()
    await expect(alias_row).to_have_count(0)
    await expect(page.get_by_text("No aliases yet.")).to_be_visible()

    # A run's page says which version it executed.
    with api(server, key) as http:
        run = http.post(
            "/api/v1/public/agent/runs", json={"prompt": "hello", "agent_id": f"{agent_id}@2"}
        ).json()
    await page.goto(f"/dashboard/#/runs/{run['run_id']}")
    await expect(page.locator("dl.meta")).to_contain_text("Versioned · version 2")

    # The Usage page of one agent counts its finished runs by version.
    with api(server, key) as http:
        for _ in range(300):
            if (
                http.get(f"/api/v1/public/agent/runs/{run['run_id']}").json()["status"]
                == "completed"
            ):
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the run did not complete")
    await page.goto(f"/dashboard/#/usage?agent={agent_id}")
    by_version = page.locator("table.versions-usage tbody tr")
    await expect(by_version).to_have_count(1)
    await expect(by_version.locator("td[data-label='Version']")).to_have_text("Version 2")
    await expect(by_version.locator("td[data-label='Runs']")).to_have_text("1")
    await shot(page, "usage-by-version")
    await page.goto("/dashboard/#/usage")
    await expect(page.get_by_role("heading", level=2, name="By agent")).to_be_visible()
    await expect(page.get_by_role("heading", level=2, name="By version")).to_have_count(0)


async def _start_run_with(page: Any, agent: str, version: str) -> None:
    """Start a run from the New run form with `version` (an option's label) of `agent`."""
    await page.goto("/dashboard/#/runs")
    await page.get_by_role("textbox", name="Prompt", exact=True).fill("hello")
    picker = page.get_by_label("Version", exact=True)
    await expect(picker).to_be_hidden()
    await page.get_by_label("Agent", exact=True).select_option(label=agent)
    await expect(picker).to_be_enabled()
    await picker.select_option(label=version)
    await page.get_by_role("button", name="Start run").click()
    await page.wait_for_url("**/dashboard/#/runs/run_*")


async def test_the_run_and_schedule_forms_pick_a_version_or_an_alias(
    page: Any, server: Server
) -> None:
    key = server.new_key()
    agent_id = _agent_edited_once(server, key, "Pinned")
    with api(server, key) as http:
        http.put(f"/v1/agents/{agent_id}/aliases/prod", json={"version": 1})
    await sign_in(page, key)

    await page.get_by_label("Agent", exact=True).select_option(label="Pinned")
    options = page.get_by_label("Version", exact=True).locator("option")
    await expect(options).to_have_text(
        ["Live version", "alias prod → v1", "Version 2", "Version 1"]
    )
    await page.get_by_label("Agent", exact=True).select_option(label="Default agent")
    await expect(page.get_by_label("Version", exact=True)).to_be_hidden()

    meta = page.locator("dl.meta")
    for version, executed in [("Version 1", 1), ("alias prod → v1", 1), ("Live version", 2)]:
        await _start_run_with(page, "Pinned", version)
        await expect(meta).to_contain_text(f"Pinned · version {executed}")

    # A schedule keeps the alias; an alias deleted after the form listed it is a 400 at Agent.
    await page.goto("/dashboard/#/schedules")
    await page.get_by_label("Prompt").fill("Write the morning report")
    await page.get_by_label("Agent", exact=True).select_option(label="Pinned")
    picker = page.get_by_label("Version", exact=True)
    await picker.select_option(label="alias prod → v1")
    with api(server, key) as http:
        http.delete(f"/v1/agents/{agent_id}/aliases/prod")
    await page.get_by_role("button", name="Create schedule").click()
    agent = page.get_by_label("Agent", exact=True)
    await expect(agent).to_have_attribute("aria-invalid", "true")
    await expect(page.locator(".field-error").filter(has_text="no alias 'prod'")).to_be_visible()

    with api(server, key) as http:
        http.put(f"/v1/agents/{agent_id}/aliases/prod", json={"version": 1})
    # Choosing the agent again reloads its versions and aliases.
    await agent.select_option(label="Default agent")
    await agent.select_option(label="Pinned")
    await picker.select_option(label="alias prod → v1")
    await page.get_by_role("button", name="Create schedule").click()
    await expect(page.get_by_role("heading", level=1, name="Schedule sch_")).to_be_visible()
    await expect(meta).to_contain_text(f"{agent_id}@prod")
    await shot(page, "schedule-with-alias")
