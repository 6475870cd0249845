"""Hostile uploads (issue 42): a zip bomb is stored as the opaque bytes it is and never
expanded; a polyglot is stored as what its bytes sniff as, only when its name agrees, and is
downloaded as an attachment that a browser must not sniff; an empty file is a 400 naming
`file`. The 100 MB upload over the cap is in test_upload_memory.py (a server's RSS)."""

from __future__ import annotations

import io
import zipfile

import httpx
import pytest

from tests.files.helpers import FILES, pdf, png, refused, upload, uploaded
from tests.runs.helpers import create_run, wait_finished

# What a zip bomb expands to: far more than any cap (never written anywhere).
EXPANDED = 2 * 1024**3


def _zip_bomb() -> bytes:
    """A small .zip whose one member says it expands to 2 GiB of zeros (9 MB at deflate level 1)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        archive.open("zeros.bin", "w", force_zip64=True) as member,
    ):
        block = b"\x00" * (16 * 1024**2)
        for _ in range(EXPANDED // len(block)):
            member.write(block)
    return out.getvalue()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return _zip_bomb()


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    # The operator allows archives: the bomb is then taken, as bytes.
    return {
        "file_max_bytes": 20_000_000,
        "file_allowed_types": "image/*,text/plain,application/pdf,application/zip",
    }


async def test_a_zip_bomb_is_kept_opaque_and_never_expanded(
    client: httpx.AsyncClient, auth: dict[str, str], bomb: bytes
) -> None:
    assert len(bomb) < 20_000_000
    made = await uploaded(client, auth, "bomb.zip", bomb)
    assert (made["content_type"], made["size_bytes"]) == ("application/zip", len(bomb))
    content = await client.get(f"{FILES}/{made['file_id']}/content", headers=auth)
    assert content.content == bomb  # the archive as sent, not its members
    # Given to a run: a line naming it, nothing of its members (no text type: never inlined).
    run = await create_run(
        client, auth, "Open it", input=[{"type": "file", "file_id": made["file_id"]}]
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert f'"bomb.zip" (application/zip, {len(bomb)} bytes)' in done["result"]
    assert "zeros.bin" not in done["result"]


@pytest.mark.parametrize("settings_overrides", [{}], ids=["default types"])
async def test_by_default_an_archive_is_refused(
    client: httpx.AsyncClient, auth: dict[str, str], bomb: bytes
) -> None:
    message = refused(await upload(client, auth, "bomb.zip", bomb), "file")
    assert "application/zip, which is not allowed" in message
    assert (await client.get(FILES, headers=auth)).json()["data"] == []


async def test_a_polyglot_is_what_its_bytes_say_and_its_name_must_agree(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    # A GIF header, then a page with a script: sniffed as image/gif.
    gif_html = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;<html><script>alert(1)</script></html>"
    as_page = refused(await upload(client, auth, "page.html", gif_html), "file")
    assert "its bytes are image/gif but its name says text/html" in as_page
    declared = await upload(client, auth, "page", gif_html, "text/html")
    assert "its declared type says text/html" in refused(declared, "file")
    made = await uploaded(client, auth, "pic.gif", gif_html)
    assert made["content_type"] == "image/gif"  # stored as what was sniffed
    content = await client.get(f"{FILES}/{made['file_id']}/content", headers=auth)
    assert content.headers["content-type"] == "image/gif"
    assert content.headers["x-content-type-options"] == "nosniff"
    assert content.headers["content-disposition"].startswith("attachment;")
    # A PNG with a PDF after it: a PDF by its name, a PNG by its bytes.
    png_pdf = png() + pdf()
    assert "its bytes are image/png but its name says application/pdf" in refused(
        await upload(client, auth, "report.pdf", png_pdf), "file"
    )
    # HTML with a PDF's magic number in front: a PDF, never text/html.
    pdf_html = pdf() + b"<html><script>alert(1)</script></html>"
    assert (await uploaded(client, auth, "doc.pdf", pdf_html))["content_type"] == "application/pdf"


@pytest.mark.parametrize("settings_overrides", [{}], ids=["default types"])
async def test_text_in_front_of_an_archive_is_no_text(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """Past the sniffed head, every byte must still be text: a ZIP behind 10 KiB of notes
    opens as an archive, so it is refused as the archive the allow-list refuses."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as packed:
        packed.writestr("payload.sh", "#!/bin/sh\necho hi\n")
    notes = b"harmless notes\n" * 700  # 10,500 bytes: more than the head the sniffer reads
    polyglot = notes + archive.getvalue()
    assert zipfile.ZipFile(io.BytesIO(polyglot)).namelist() == ["payload.sh"]
    message = refused(await upload(client, auth, "notes.txt", polyglot), "file")
    assert "application/octet-stream, which is not allowed" in message
    # Invalid UTF-8 or a NUL after the head, alone, is no text either.
    for tail in (b"\xff\xfe", b"\x00"):
        refused(await upload(client, auth, "notes.txt", notes + tail), "file")
    # Text to its end is text, a character cut across the parser's chunks included.
    long_text = ("é" * 700_000).encode()  # 1.4 MB: past the spool, in several chunks
    assert (await uploaded(client, auth, "accents.txt", long_text))["content_type"] == (
        "text/plain"
    )
    assert [
        item["filename"] for item in (await client.get(FILES, headers=auth)).json()["data"]
    ] == ["accents.txt"]


async def test_an_empty_upload_is_a_400_naming_file(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    assert (
        refused(await upload(client, auth, "empty.txt", b""), "file") == "file is empty (0 bytes)"
    )
    assert (await client.get(FILES, headers=auth)).json()["data"] == []
