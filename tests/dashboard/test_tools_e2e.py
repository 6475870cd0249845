"""The agent editor's tools and output schema, and a run of such an agent, in headless Chromium:
an MCP server (the README's example server on loopback) with a write-only header, a function
tool, an output schema whose mistakes are said next to its box; the run page shows the prompt,
the model, the tool events and the JSON result; the runs list the prompt and the model."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import DESKTOP, PHONE, McpExample, Server, shot
from tests.dashboard.test_e2e import OVERFLOW, UNLABELLED, expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")
SECRET = "Bearer dashboard-zebra-7781"
SCHEMA = '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}'


async def test_agent_editor_tools_schema_and_a_run_with_tool_events(
    page: Any, server: Server, mcp_example: McpExample
) -> None:
    key = server.new_key()
    await sign_in(page, key)
    await page.get_by_role("link", name="Agents").click()
    await expect(page.get_by_role("heading", level=1, name="Agents")).to_be_visible()

    # Only models this server accepts are suggested: no provider is configured here.
    options = page.locator("#model-options option")
    assert await options.evaluate_all("(els) => els.map((el) => el.value)") == ["atrium:offline"]

    await page.get_by_label("Name", exact=True).fill("Librarian")
    await page.get_by_role("button", name="Add MCP server").click()
    mcp = page.get_by_role("group", name="MCP server 1")
    await mcp.get_by_label("Server label").fill("glossary")
    await mcp.get_by_label("Server URL").fill(mcp_example.url)
    await mcp.get_by_label("Allowed tools").fill("lookup, add")
    await mcp.get_by_role("button", name="Add header").click()
    await mcp.get_by_label("Header name").fill("Authorization")
    await mcp.get_by_label("Header value").fill(SECRET)
    await page.get_by_role("button", name="Add function").click()
    function = page.get_by_role("group", name="Function 1")
    await function.get_by_label("Function name").fill("ask_librarian")
    await function.get_by_label("Parameters (JSON Schema)").fill(
        '{"type": "object", "properties": {"q": {"type": "string"}}}'
    )
    schema = page.get_by_label("Output schema (JSON)")

    # Not JSON: said next to the box, nothing sent.
    await schema.fill("{nope")
    await page.get_by_role("button", name="Create agent").click()
    schema_error = page.locator(".field:has(textarea[name='config.output_schema']) .field-error")
    await expect(schema_error).to_contain_text("not valid JSON")
    await expect(schema).to_have_attribute("aria-invalid", "true")
    await expect(schema).to_be_focused()
    # JSON the API refuses: its message next to the box.
    await schema.fill('{"type": "string"}')
    await page.get_by_role("button", name="Create agent").click()
    await expect(schema_error).to_contain_text("config.output_schema")
    await expect(schema).to_have_attribute("aria-invalid", "true")
    await shot(page, "desktop-agent-schema-error")
    # A tool the API refuses: the message next to the field it names.
    await mcp.get_by_label("Server label").fill("9lossary")
    await schema.fill(SCHEMA)
    await page.get_by_role("button", name="Create agent").click()
    label_error = mcp.locator(".field:has([data-key=server_label]) .field-error")
    await expect(label_error).to_contain_text("server_label")
    await expect(mcp.get_by_label("Server label")).to_have_attribute("aria-invalid", "true")
    await expect(schema_error).to_be_hidden()
    await mcp.get_by_label("Server label").fill("glossary")
    await page.get_by_role("button", name="Create agent").click()

    row = page.locator("tbody tr").filter(has_text="Librarian")
    await expect(row).to_contain_text("glossary (MCP), ask_librarian (function)")
    await expect(row).to_contain_text("JSON output")
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as api:
        [agent] = (await api.get("/v1/agents")).json()["data"]
    server_tool = agent["config"]["tools"][-2]
    assert server_tool["headers"] == {"Authorization": "***"}
    assert server_tool["allowed_tools"] == ["lookup", "add"]
    assert agent["config"]["output_schema"] == json.loads(SCHEMA)

    # Editing: the stored header is "set", never shown; left blank, "***" keeps it.
    await page.get_by_role("link", name="Edit Librarian").click()
    await expect(page.get_by_role("heading", level=1, name="Edit agent")).to_be_visible()
    mcp = page.get_by_role("group", name="MCP server 1")
    stored = mcp.get_by_label("Value of Authorization (set)")
    await expect(stored).to_have_value("")
    assert SECRET not in await page.content()
    await page.get_by_label("Description", exact=True).fill("Looks words up")
    await shot(page, "desktop-agent-tools-edit")
    # Every control of the cards is labelled, and the editor fits a phone.
    assert await page.evaluate(UNLABELLED) == []
    await page.set_viewport_size(PHONE)
    assert await page.evaluate(OVERFLOW) <= 0, "the agent editor scrolls sideways on a phone"
    await shot(page, "phone-agent-tools-edit")
    await page.set_viewport_size(DESKTOP)
    async with page.expect_request(lambda request: request.method == "PUT") as put:
        await page.get_by_role("button", name="Save changes").click()
    sent = json.loads((await put.value).post_data)
    assert sent["config"]["tools"][-2]["headers"] == {"Authorization": "***"}
    await expect(page.get_by_role("heading", level=1, name="Agents")).to_be_visible()

    # A new URL with the header left blank: the API asks for the value, said at the headers.
    await page.get_by_role("link", name="Edit Librarian").click()
    mcp = page.get_by_role("group", name="MCP server 1")
    await mcp.get_by_label("Server URL").fill(mcp_example.url.replace("/mcp", "/mcp/"))
    await page.get_by_role("button", name="Save changes").click()
    await expect(mcp.locator("[data-slot=headers]")).to_contain_text("send the value again")
    await page.get_by_role("link", name="Cancel").click()

    # A run: its page shows the prompt, the model, each tool event and the JSON result.
    prompt = 'Define it.\ncall glossary_lookup {"word": "atrium"}\noutput {"answer": "a hall"}'
    await page.get_by_role("link", name="Runs", exact=True).click()
    await page.get_by_label("Prompt").fill(prompt)
    await page.get_by_label("Agent", exact=True).select_option(label="Librarian")
    await page.get_by_role("button", name="Start run").click()
    await page.wait_for_url("**/dashboard/#/runs/run_*")
    status = page.locator(".run-status .badge")
    await expect(status).to_have_text("completed", timeout=30_000)
    await expect(page.get_by_label("Prompt text")).to_have_text(prompt)
    await expect(page.locator(".meta")).to_contain_text("atrium:offline")
    events = page.get_by_role("list", name="Events")
    called = events.locator("li[data-kind='tool.called']")
    await expect(called).to_contain_text('glossary_lookup({"word":"atrium"})')
    returned = events.locator("li[data-kind='tool.returned']")
    await expect(returned).to_contain_text(
        "glossary_lookup returned: the central hall of a Roman house"
    )
    output = page.get_by_label("Result text")
    await expect(output).to_have_text('{\n  "answer": "a hall"\n}')
    await expect(page.get_by_text("a JSON object of the agent's output schema")).to_be_visible()
    await shot(page, "desktop-run-tools")
    assert 'called lookup {"word": "atrium"}' in mcp_example.calls()

    # The runs list shows the prompt and the model.
    await page.get_by_role("link", name="Runs", exact=True).click()
    first = page.locator("tbody tr").first
    await expect(first.locator("td[data-label=Prompt]")).to_contain_text("Define it.")
    await expect(first.locator("td[data-label=Model]")).to_have_text("atrium:offline")
    await expect(first.locator("td[data-label=Result]")).to_have_text('{"answer":"a hall"}')
    assert await page.evaluate(OVERFLOW) <= 0, "the runs list scrolls sideways"
