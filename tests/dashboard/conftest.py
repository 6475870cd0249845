"""A real `atrium serve` and one headless Chromium (Debian's, driven by Playwright) per session.

The e2e tests skip, saying why, when there is no Chromium binary (`.ci/run` installs Debian's
`chromium`) or no Playwright; `playwright install` is never used: its downloads are blocked.
Screenshots of every page go to `tests/dashboard/screenshots/` (gitignored).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import processes
from tests.processes import (
    atrium_env,
    free_port,
    listening,
    new_account_key,
    start_atrium,
    stop_process,
    wait_for_http,
)

SCREENSHOTS = Path(__file__).parent / "screenshots"
EXAMPLE_MCP_SERVER = Path(__file__).parents[2] / "examples" / "mcp_server.py"
BOOTSTRAP_KEY = "atr_dashboard-e2e-bootstrap-key-0123456789"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


def chromium_binary() -> str | None:
    for candidate in (os.environ.get("ATRIUM_TEST_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    return None


@dataclass
class Server:
    url: str
    env: dict[str, str]
    log: Path

    def new_key(self) -> str:
        """A key of a new, empty account."""
        return new_account_key(self.env)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = chromium_binary()
    if path is None:
        pytest.skip("no chromium binary on PATH (apt-get install chromium; .ci/run does it)")
    pytest.importorskip(
        "playwright", reason="playwright is not installed (pip install -e '.[dev]')"
    )
    return path


@pytest.fixture(scope="session")
def slow_llm(chromium_path: str) -> Iterator[str]:
    # The slow model of the client tests: a run lasts long enough to watch.
    with processes.slow_llm(pause=0.1, words=30) as url:
        yield url


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, slow_llm: str) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("dashboard-server")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY=BOOTSTRAP_KEY,
        ATRIUM_PUBLIC_URL=url,
        ATRIUM_LLM_BASE_URL=slow_llm,
        ATRIUM_SSE_HEARTBEAT_SECONDS="1",
        # The memory page offers search by meaning when the server has an embeddings model.
        ATRIUM_EMBEDDINGS_MODEL="offline",
        # The example MCP server of the tools tests listens on loopback.
        ATRIUM_ALLOW_PRIVATE_TARGETS="true",
        PYTHONUNBUFFERED="1",
    )
    log = tmp / "serve.log"
    log.write_text("")
    # Forked from the forkserver that imported the server's libraries (tests/processes.py).
    process = start_atrium(["serve", "--port", str(port)], env=env, output=log)
    try:
        wait_for_http(f"{url}/healthz", process=process, log=log)
        yield Server(url=url, env=env, log=log)
    finally:
        stop_process(process)


@dataclass
class McpExample:
    url: str
    log: Path

    def calls(self) -> str:
        """What the server printed: a `called NAME {arguments}` line per call."""
        return self.log.read_text()


@pytest.fixture(scope="session")
def mcp_example(
    tmp_path_factory: pytest.TempPathFactory, chromium_path: str
) -> Iterator[McpExample]:
    """The README's example MCP server (`examples/mcp_server.py`) on a loopback port."""
    port = free_port()
    log = tmp_path_factory.mktemp("mcp-example") / "mcp.log"
    with listening([sys.executable, str(EXAMPLE_MCP_SERVER), "--port", str(port)], port, log):
        yield McpExample(url=f"http://127.0.0.1:{port}/mcp", log=log)


@pytest.fixture(scope="session")
async def browser(chromium_path: str) -> AsyncIterator[Any]:
    # The async API: the sync one runs its own event loop, which clashes with pytest-asyncio's.
    from playwright.async_api import async_playwright

    SCREENSHOTS.mkdir(exist_ok=True)
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=chromium_path, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            await launched.close()


def _expected_api_answer(text: str) -> bool:
    # Chromium logs every 4xx answer; the tests provoke some (a refused key, a bad field) on
    # purpose and check that the page shows them. CSP violations and script errors still count.
    return text.startswith("Failed to load resource: the server responded with a status of 4")


@pytest.fixture
async def page(browser: Any, server: Server) -> AsyncIterator[Any]:
    """A fresh browser context (its own sessionStorage); fails the test on any page error."""
    context = await browser.new_context(
        viewport=DESKTOP,
        base_url=server.url,
        accept_downloads=True,
        locale="en-GB",
        reduced_motion="reduce",
    )
    context.set_default_timeout(15_000)
    opened = await context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    opened.on(
        "console",
        lambda message: (
            problems.append(f"console: {message.text}")
            if message.type == "error" and not _expected_api_answer(message.text)
            else None
        ),
    )
    try:
        yield opened
    finally:
        await context.close()
    assert problems == []


async def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot under tests/dashboard/screenshots/."""
    path = SCREENSHOTS / f"{name}.png"
    # A passing notification ("Created …") would hide part of the page: dismiss it, as a click
    # on it does (the contexts prefer reduced motion, so it disappears at once).
    await page.evaluate("document.getElementById('toast')?.classList.remove('visible')")
    await page.screenshot(path=str(path), full_page=True)
    return path
