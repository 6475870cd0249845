"""The README and every guide run as written against a live server, so a page that drifts from
the API fails here (conventions: tests/docs/pages.py; what the runner changes: runner.py)."""

from __future__ import annotations

import asyncio
import os
import re
import socket
from pathlib import Path

import pytest

from tests.conftest import _create_postgres_database
from tests.docs.pages import Page, parse
from tests.docs.runner import PAGE_TIMEOUT, ROOT, PageFailed, run_page

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
SERVICES = {
    "postgres": "ATRIUM_TEST_POSTGRES_URL",
    "redis": "ATRIUM_TEST_REDIS_URL",
}


def _skip_without_services(page: Page) -> None:
    for need in sorted(page.needs):
        variable = SERVICES[need]
        if not os.environ.get(variable):
            pytest.skip(f"{page.path.name} needs {need}: {variable} is not set")


# What a page that needs them writes: the deployment's own database and Redis on loopback.
PAGE_POSTGRES_URL = "postgresql+asyncpg://postgres@127.0.0.1:5432/atrium"
PAGE_REDIS_URL = "redis://127.0.0.1:6379/0"


@pytest.mark.timeout(PAGE_TIMEOUT + 60)
@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
async def test_page_runs_as_written(path: Path, tmp_path: Path) -> None:
    page = parse(path)
    _skip_without_services(page)
    replace: dict[str, str] = {}
    drop = None
    if "redis" in page.needs:
        replace[PAGE_REDIS_URL] = os.environ[SERVICES["redis"]]
    if "postgres" in page.needs:
        url, drop = await _create_postgres_database(os.environ[SERVICES["postgres"]])
        replace[PAGE_POSTGRES_URL] = url
    try:
        await asyncio.to_thread(run_page, page, tmp_path / "page", replace=replace)
    finally:
        if drop is not None:
            await drop()


def _write(tmp_path: Path, text: str) -> Page:
    path = tmp_path / "drift.md"
    path.write_text(text)
    return parse(path)


def test_a_request_the_server_refuses_fails_the_page(tmp_path: Path) -> None:
    page = _write(
        tmp_path,
        "```sh server\nmake run\n```\n\n"
        "```sh\nexport ATRIUM_API_KEY=atr_…\n"
        'curl -sf "$ATRIUM_URL/v1/agents" -H "Authorization: Bearer $ATRIUM_API_KEY"\n```\n\n'
        "```sh\ncurl -sf -X POST http://127.0.0.1:8000/v1/agents"
        ' -H "Authorization: Bearer $ATRIUM_API_KEY" -d \'{"nam": "x"}\'\n```\n',
    )
    with pytest.raises(PageFailed, match=r"```sh at line 10 exited 22"):
        run_page(page, tmp_path / "run")


def test_output_the_page_shows_must_be_printed(tmp_path: Path) -> None:
    page = _write(
        tmp_path,
        "```sh\necho 'served on 127.0.0.1:8000'\n```\n\n```text\nserved on 127.0.0.1:8000\n```\n\n"
        "```sh\necho 'agent agt_123 created'\n```\n\n```text\nagent … deleted\n```\n",
    )
    with pytest.raises(PageFailed, match="line 9 did not print 'agent … deleted'"):
        run_page(page, tmp_path / "run")


def test_background_blocks_and_shell_state_carry_over(tmp_path: Path) -> None:
    page = _write(
        tmp_path,
        "```sh background\npython - --port 9999 <<'EOF'\nimport http.server, sys\n"
        "address = ('127.0.0.1', int(sys.argv[2]))\n"
        "http.server.HTTPServer(address, http.server.SimpleHTTPRequestHandler).serve_forever()\n"
        "EOF\n```\n\n"
        "```sh\nGREETING=hello\n```\n\n"
        "```sh\ncurl -s -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:9999/\n"
        "echo $GREETING\n```"
        "\n\n```text\n200\nhello\n```\n\n"
        '```python\nimport os\nprint(os.environ.get("ATRIUM_URL", "no server"))\n```\n',
    )
    outputs = run_page(page, tmp_path / "run")
    assert outputs[3].strip() == "no server"
    script = (tmp_path / "run" / "page.sh").read_text()
    assert "9999" not in script
    # The background server was stopped with the page: its port is closed again.
    [port] = re.findall(r"127\.0\.0\.1:(\d+)/", script)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
