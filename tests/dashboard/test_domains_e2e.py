"""The domains page in headless Chromium: each domain's verified state, the TXT record to publish,
why the last check failed and when, and a Verify button that checks DNS again and shows the
outcome. The server's DNS lookups go to a loopback DNS server of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.dashboard.conftest import BOOTSTRAP_KEY, PHONE, Server, shot
from tests.dashboard.test_e2e import expect, sign_in
from tests.dns_server import DNSServer
from tests.processes import atrium_env, free_port, start_atrium, stop_process, wait_for_http

pytestmark = pytest.mark.usefixtures("chromium_path")
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
# What runs past the edge of a row shown as a card: an element, or a line of text (measured by
# a Range, as text has no box of its own), wider than the card or sticking out of it.
PAST_THE_CARD = """() => {
  const out = [];
  for (const card of document.querySelectorAll("table.cards tbody tr")) {
    const edge = card.getBoundingClientRect();
    const elements = [...card.querySelectorAll("*")];
    const boxes = elements.map((node) => [node, node.getBoundingClientRect()]);
    const walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(text);
      boxes.push(...[...range.getClientRects()].map((box) => [text.parentElement, box]));
    }
    for (const [node, box] of boxes) {
      if (box.width === 0) continue;
      if (box.left < edge.left - 0.5 || box.right > edge.right + 0.5) {
        out.push(`${node.tagName}: ${node.textContent.slice(0, 60)}`);
      }
    }
  }
  return out;
}"""
# A page URL with no place to break but its slashes: longer than a phone is wide.
LONG_URL = "https://example.com/welcome/" + "a-very-long-landing-page-name" * 3


@pytest.fixture(scope="module")
def dns(chromium_path: str) -> Iterator[DNSServer]:
    server = DNSServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, dns: DNSServer) -> Iterator[Server]:
    """This module's `atrium serve` (the `page` fixture opens it): its lookups ask `dns`."""
    tmp = tmp_path_factory.mktemp("dashboard-domains")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY=BOOTSTRAP_KEY,
        ATRIUM_PUBLIC_URL=url,
        ATRIUM_DNS_NAMESERVERS=dns.address,
        ATRIUM_DNS_TIMEOUT_SECONDS="2",
        PYTHONUNBUFFERED="1",
    )
    log = tmp / "serve.log"
    log.write_text("")
    process = start_atrium(["serve", "--port", str(port), "--no-worker"], env=env, output=log)
    try:
        wait_for_http(f"{url}/healthz", process=process, log=log)
        yield Server(url=url, env=env, log=log)
    finally:
        stop_process(process)


def _row(page: Any, name: str) -> Any:
    return page.locator("table tbody tr").filter(
        has=page.get_by_role("link", name=name, exact=True)
    )


def _api(server: Server, key: str | None = None) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(base_url=server.url, headers=headers)


async def test_a_domain_is_verified_from_its_row(page: Any, server: Server, dns: DNSServer) -> None:
    key = server.new_key()
    async with _api(server, key) as http:
        made = await http.post(
            "/api/v1/domains",
            data={"name": "shop.example.test", "index_page": "https://example.com/welcome"},
        )
        assert made.status_code == 201, made.text
        token = made.json()["data"]["verification"]["txt_value"]
        done = (await http.post("/api/v1/domains", data={"name": "done.example.test"})).json()
        done = done["data"]
        dns.records["_atrium-challenge.done.example.test"] = {
            "TXT": [done["verification"]["txt_value"]]
        }
        checked = await http.post(f"/api/v1/domains/{done['id']}/verify")
        assert checked.json()["data"]["verified"]
    await sign_in(page, key)
    await page.get_by_role("link", name="Domains").click()
    await expect(page.get_by_role("heading", level=1, name="Domains")).to_be_visible()

    # A new domain: not verified, never checked, the record to publish in full.
    row = _row(page, "shop.example.test")
    cell = row.locator("td[data-label='Verification']")
    await expect(cell).to_contain_text("not verified")
    await expect(cell).to_contain_text("Not checked yet")
    record = row.get_by_label("DNS record to publish for shop.example.test")
    await expect(record).to_contain_text("_atrium-challenge.shop.example.test")
    await expect(record).to_contain_text("TXT")
    await expect(record).to_contain_text(token)
    # The verified one says so, with when, and offers nothing to do.
    verified = _row(page, "done.example.test").locator("td[data-label='Verification']")
    await expect(verified).to_contain_text("verified")
    await expect(verified).to_contain_text("Checked")
    await expect(verified.get_by_role("button")).to_have_count(0)
    assert await page.evaluate(OVERFLOW) <= 0
    await shot(page, "desktop-11-domain-verification")

    # Verify with nothing published: why, and when.
    await page.get_by_role("button", name="Verify shop.example.test").click()
    await expect(cell).to_contain_text("No TXT record at _atrium-challenge.shop.example.test.")
    await expect(cell.locator("time")).to_have_count(1)
    await expect(page.locator("#toast")).to_contain_text("shop.example.test is not verified")

    # A wrong value, then the right one.
    dns.records["_atrium-challenge.shop.example.test"] = {"TXT": ["not-the-token"]}
    await page.get_by_role("button", name="Verify shop.example.test").click()
    await expect(cell).to_contain_text("do not hold the token")
    dns.records["_atrium-challenge.shop.example.test"] = {"TXT": [token]}
    await page.get_by_role("button", name="Verify shop.example.test").click()
    await expect(cell.locator(".badge")).to_have_text("verified")
    await expect(cell).to_contain_text("Checked")
    await expect(page.get_by_role("button", name="Verify shop.example.test")).to_have_count(0)
    await expect(page.locator("#toast")).to_contain_text("shop.example.test is verified")
    async with _api(server) as http:
        served = await http.get("/", headers={"Host": "shop.example.test"})
    assert served.status_code == 302
    assert served.headers["location"] == "https://example.com/welcome"

    # On a phone: the record and the pages' URLs wrap inside their card, nothing scrolls
    # sideways.
    async with _api(server, key) as http:
        await http.post(
            "/api/v1/domains",
            data={
                "name": "a-rather-long-name.shop.example.test",
                "index_page": LONG_URL,
                "not_found_page": f"{LONG_URL}/not-found",
            },
        )
    await page.set_viewport_size(PHONE)
    await page.reload()
    long_name = page.get_by_role("button", name="Verify a-rather-long-name.shop.example.test")
    await expect(long_name).to_be_visible()
    await expect(page.get_by_text(LONG_URL, exact=True)).to_be_visible()
    assert await page.evaluate(OVERFLOW) <= 0
    assert await page.evaluate(PAST_THE_CARD) == []
    await shot(page, "phone-11-domain-verification")
