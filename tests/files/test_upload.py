"""Uploading, listing, reading, downloading and deleting files over HTTP, in each store."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import KeyFactory, bearer
from tests.files.helpers import FILES, pdf, png, refused, upload, uploaded


@pytest.fixture(params=["database", "disk"])
def settings_overrides(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, object]:
    return {
        "file_storage": request.param,
        "file_dir": tmp_path / "files",
        "file_max_bytes": 100_000,
    }


def _stored_on_disk(tmp_path: Path) -> list[str]:
    folder = tmp_path / "files"
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


async def test_upload_list_read_download_delete(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    settings_overrides: dict[str, object],
    tmp_path: Path,
) -> None:
    image = png()
    made = await uploaded(client, auth, "cat.png", image)
    assert made["file_id"].startswith("file_")
    assert (made["filename"], made["content_type"], made["size_bytes"]) == (
        "cat.png",
        "image/png",
        len(image),
    )
    assert made["sha256"] == hashlib.sha256(image).hexdigest()
    notes = await uploaded(client, auth, "notes.md", b"# Notes\n\nThe queue is durable.\n")
    assert notes["content_type"] == "text/markdown"

    listed = (await client.get(FILES, headers=auth)).json()
    assert [item["file_id"] for item in listed["data"]] == [notes["file_id"], made["file_id"]]
    page = (await client.get(FILES, params={"limit": 1}, headers=auth)).json()
    assert page["has_more"] is True
    rest = await client.get(FILES, params={"cursor": page["next_cursor"]}, headers=auth)
    assert [item["file_id"] for item in rest.json()["data"]] == [made["file_id"]]

    got = await client.get(f"{FILES}/{made['file_id']}", headers=auth)
    assert got.json() == made
    content = await client.get(f"{FILES}/{made['file_id']}/content", headers=auth)
    assert content.content == image
    assert content.headers["content-type"] == "image/png"
    assert content.headers["x-content-type-options"] == "nosniff"
    assert "cat.png" in content.headers["content-disposition"]
    if settings_overrides["file_storage"] == "disk":
        assert _stored_on_disk(tmp_path) == sorted([made["file_id"], notes["file_id"]])

    deleted = await client.delete(f"{FILES}/{made['file_id']}", headers=auth)
    assert deleted.json() == {"file_id": made["file_id"], "deleted": True}
    assert (await client.get(f"{FILES}/{made['file_id']}", headers=auth)).status_code == 404
    gone = await client.get(f"{FILES}/{made['file_id']}/content", headers=auth)
    assert gone.status_code == 404
    if settings_overrides["file_storage"] == "disk":
        assert _stored_on_disk(tmp_path) == [notes["file_id"]]


async def test_hostile_uploads_are_refused_and_nothing_is_kept(
    client: httpx.AsyncClient, auth: dict[str, str], tmp_path: Path
) -> None:
    empty = await upload(client, auth, "empty.txt", b"")
    assert "empty" in refused(empty, "file")
    oversize = await upload(client, auth, "big.txt", b"a" * 100_001)
    assert "larger than 100000 bytes" in refused(oversize, "file")
    archive = await upload(client, auth, "data.zip", b"PK\x03\x04" + b"\x00" * 100)
    assert "application/zip, which is not allowed" in refused(archive, "file")
    program = await upload(client, auth, "run.bin", b"\x7fELF\x02\x01\x01" + b"\x00" * 100)
    assert "not allowed" in refused(program, "file")
    # A PDF named as an image, and one declared as an image: its bytes say what it is.
    named = await upload(client, auth, "cat.png", pdf())
    assert "bytes are application/pdf but its name says image/png" in refused(named, "file")
    declared = await upload(client, auth, "cat", pdf(), "image/png")
    assert "its declared type says image/png" in refused(declared, "file")
    # A PNG whose tail is a ZIP (opens as both): refused as a PNG only by its type's rules,
    # which it passes; named .zip, its name disagrees with its bytes.
    polyglot = png() + b"PK\x03\x04" + b"\x00" * 30
    assert "its name says application/zip" in refused(
        await upload(client, auth, "cat.zip", polyglot), "file"
    )
    binary_as_text = await upload(client, auth, "notes.txt", b"\x00\x01\x02binary")
    assert "not allowed" in refused(binary_as_text, "file")
    path_name = await upload(client, auth, "../../etc/passwd", b"root")
    assert path_name.status_code == 201  # the name's last part only: `passwd`
    assert path_name.json()["filename"] == "passwd"
    hidden = await upload(client, auth, ".bashrc", b"alias")
    refused(hidden, "file")
    listed = (await client.get(FILES, headers=auth)).json()["data"]
    assert [item["filename"] for item in listed] == ["passwd"]
    assert _stored_on_disk(tmp_path) in ([], [listed[0]["file_id"]])


async def test_a_body_that_is_not_an_upload(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    as_json = await client.post(FILES, json={"file": "x"}, headers=auth)
    assert as_json.status_code == 415
    other_field = await client.post(
        FILES, files={"document": ("a.txt", b"text", "text/plain")}, headers=auth
    )
    refused(other_field, "document")
    no_file = await client.post(FILES, data={"file": "just text"}, files={}, headers=auth)
    assert no_file.status_code in (400, 415)
    two = await client.post(
        FILES,
        files=[
            ("file", ("a.txt", b"one", "text/plain")),
            ("file", ("b.txt", b"two", "text/plain")),
        ],
        headers=auth,
    )
    assert "one `file`" in refused(two, "file")
    assert (await client.get(FILES, headers=auth)).json()["data"] == []


async def test_a_chunked_body_is_bounded_past_its_file(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """Bytes after the closing boundary count towards the body's bound as the file's do: a
    chunked upload of a small file followed by endless padding is refused, nothing kept."""
    boundary = "atrium-bound"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n'
        f"Content-Type: text/plain\r\n\r\nsmall\r\n--{boundary}--\r\n"
    ).encode()

    async def body(padding: int) -> AsyncIterator[bytes]:
        yield head
        for _ in range(padding // 65_536):
            yield b"x" * 65_536

    headers = {**auth, "Content-Type": f"multipart/form-data; boundary={boundary}"}
    # 100,000 bytes of file and 65,536 of framing may come; 196,608 bytes after the end may not.
    padded = await client.post(FILES, content=body(3 * 65_536), headers=headers)
    assert "larger than 100000 bytes" in refused(padded, "file")
    assert (await client.get(FILES, headers=auth)).json()["data"] == []
    # A little after the closing boundary is the framing's allowance: taken.
    made = await client.post(FILES, content=body(65_536), headers=headers)
    assert made.status_code == 201, made.text
    assert made.json()["size_bytes"] == len(b"small")


async def test_another_accounts_file_is_unknown(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    mine = await uploaded(client, auth, "notes.txt", b"mine")
    other = bearer((await make_key("other-account")).key)
    for path in (f"{FILES}/{mine['file_id']}", f"{FILES}/{mine['file_id']}/content"):
        assert (await client.get(path, headers=other)).status_code == 404
    assert (await client.delete(f"{FILES}/{mine['file_id']}", headers=other)).status_code == 404
    assert (await client.get(FILES, headers=other)).json()["data"] == []
    assert (await client.get(f"{FILES}/{mine['file_id']}", headers=auth)).status_code == 200


async def test_an_id_no_file_can_have_is_a_404(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    for file_id in ("file_%00x", "a" * 41, "file_x%20y"):
        assert (await client.get(f"{FILES}/{file_id}", headers=auth)).status_code == 404
        assert (await client.get(f"{FILES}/{file_id}/content", headers=auth)).status_code == 404
        assert (await client.delete(f"{FILES}/{file_id}", headers=auth)).status_code == 404
