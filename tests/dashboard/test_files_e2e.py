"""Files on the dashboard (Chromium): the new-run form attaches files, which are uploaded and
given to the run; the run's page lists its input and previews its image."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.dashboard.conftest import Server, shot
from tests.dashboard.test_e2e import expect, sign_in

pytestmark = pytest.mark.usefixtures("chromium_path")


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x30\x90\xe0" * 8 for _ in range(8))
    header = struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


async def test_a_run_with_attached_files_shows_its_input(
    page: Any, server: Server, tmp_path: Path
) -> None:
    image = tmp_path / "swatch.png"
    image.write_bytes(_png())
    notes = tmp_path / "notes.txt"
    notes.write_text("Blue is the colour of the sea.\n")
    await sign_in(page, server.new_key())
    await page.get_by_label("Prompt").fill("Which colour is the swatch?")
    await page.get_by_label("Files").set_input_files([str(image), str(notes)])
    await expect(page.locator(".attachments li")).to_have_count(2)
    await page.get_by_role("button", name="Start run").click()
    await expect(page.get_by_role("heading", level=1, name="Run")).to_be_visible()
    section = page.get_by_role("region", name="Input")
    await expect(section.locator("li")).to_have_count(2)
    await expect(section.locator("li").nth(0)).to_contain_text("swatch.png (image/png")
    await expect(section.locator("li").nth(1)).to_contain_text("notes.txt (text/plain")
    preview = section.get_by_role("img", name="Preview of swatch.png")
    await expect(preview).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    width = await preview.evaluate("(img) => img.complete ? img.naturalWidth : 0")
    assert width == 8
    await expect(page.locator(".output").nth(1)).to_contain_text(
        "given as an image of", timeout=30_000
    )
    await expect(page.locator(".output").nth(1)).to_contain_text("Blue is the colour of the sea.")
    await shot(page, "run-with-files")
    # The thread's conversation shows the prompt's parts a line each, the image by its line.
    await page.locator('a[href^="#/threads/thr_"]').first.click()
    prompt = page.locator("pre.message-text").first
    await expect(prompt).to_contain_text("Which colour is the swatch?\nFile file_")
    await expect(prompt).to_contain_text("given as image/png; read_file reads it]")
