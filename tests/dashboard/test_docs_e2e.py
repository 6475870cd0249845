"""`/docs` in headless Chromium with every other origin unreachable: Swagger UI renders the
API from atrium's own files under its Content-Security-Policy (the `page` fixture fails the
test on any script error or CSP violation), and "Try it out" calls the API.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.dashboard.conftest import BOOTSTRAP_KEY, Server, shot
from tests.dashboard.test_e2e import expect

pytestmark = pytest.mark.usefixtures("chromium_path")


def operation(page: Any, method: str, path: str) -> Any:
    summary = page.locator(f'.opblock-summary-path[data-path="{path}"]')
    return page.locator(f".opblock.opblock-{method}").filter(has=summary)


async def test_docs_render_offline_from_the_same_origin(page: Any, server: Server) -> None:
    elsewhere: list[str] = []

    async def same_origin_only(route: Any) -> None:
        url: str = route.request.url
        if url.startswith(server.url + "/") or url.startswith("data:"):
            await route.continue_()
        else:  # what a machine without Internet access would see
            elsewhere.append(url)
            await route.abort()

    await page.context.route("**/*", same_origin_only)
    await page.goto("/docs")
    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("atrium")
    await expect(operation(page, "get", "/healthz")).to_be_visible()
    assert await page.locator(".opblock").count() > 30

    # Authorize with the key, then call an operation of a group from the page.
    await page.get_by_role("button", name="Authorize").first.click()
    await page.locator(".modal-ux input[type=text]").fill(BOOTSTRAP_KEY)
    await page.locator(".modal-ux button.authorize").click()
    await page.locator(".modal-ux button.btn-done").click()
    account = operation(page, "get", "/v1/account")
    await account.locator(".opblock-summary").click()
    await account.get_by_role("button", name="Try it out").click()
    await account.get_by_role("button", name="Execute").click()
    status = account.locator(".live-responses-table tbody .response-col_status").first
    await expect(status).to_have_text("200")
    await shot(page, "docs")
    assert elsewhere == []
