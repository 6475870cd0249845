"""Files through the Python client and the `atrium` command, against a real server with the
offline model: upload a path, run with it and an image, download an artifact derived from it."""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from atrium.client import AsyncClient, Client, InvalidParameterError, NotFoundError
from tests.client.conftest import Server
from tests.files.image_host import Answer, ImageHost, image_host

__all__ = ["image_host"]


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    return replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "200"})


def test_upload_run_with_file_and_image_download_artifact(atrium: Client, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\nShip the queue.\n")
    uploaded = atrium.files.upload(notes)
    assert (uploaded.filename, uploaded.content_type) == ("notes.md", "text/markdown")
    image = atrium.files.upload(_png(), filename="dot.png")
    assert image.content_type == "image/png"
    assert [item.file_id for item in atrium.files.list().data] == [image.file_id, uploaded.file_id]
    assert atrium.files.content(uploaded.file_id) == notes.read_bytes()
    saved = atrium.files.download(uploaded.file_id, to=tmp_path / "back")
    assert saved.read_bytes() == notes.read_bytes()

    run = atrium.runs.create(
        "Turn the plan into a checklist",
        input=[
            {"type": "file", "file_id": uploaded.file_id},
            {"type": "image", "file_id": image.file_id},
        ],
    )
    assert run.input is not None and run.input[0]["filename"] == "notes.md"
    done = atrium.runs.wait(run.run_id)
    assert done.status == "completed"
    assert f"Received File {uploaded.file_id}" in str(done.result)
    assert "given as an image of" in str(done.result)
    # The artifact the run wrote from it, downloaded, then given to another run by its id.
    [artifact] = done.artifacts or []
    path = atrium.runs.download_artifact(run.run_id, artifact.artifact_id, to=tmp_path / "out")
    written = path.read_text()
    assert "Turn the plan into a checklist" in written
    # Derived from the file and the image: the offline model lists what it was given.
    assert (
        f'- Received File {uploaded.file_id} "notes.md" (text/markdown, {uploaded.size_bytes} '
        "bytes), beginning: '# Plan Ship the queue.'."
    ) in written
    assert f"given as an image of {image.size_bytes} bytes." in written
    review = atrium.runs.create(
        "Review", input=[{"type": "file", "artifact_id": artifact.artifact_id}]
    )
    assert f"Received File {artifact.artifact_id}" in str(atrium.runs.wait(review.run_id).result)

    with pytest.raises(InvalidParameterError) as refused:
        atrium.files.upload(b"", filename="empty.txt")
    assert refused.value.parameter == "file"
    assert atrium.files.delete(uploaded.file_id).deleted is True
    with pytest.raises(NotFoundError):
        atrium.files.get(uploaded.file_id)


async def test_the_async_client_uploads_too(async_atrium: AsyncClient, tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,2\n")
    made = await async_atrium.files.upload(path)
    assert made.content_type == "text/csv"
    assert [item.file_id async for item in async_atrium.files.iter_all()] == [made.file_id]


def test_cli_run_with_files(user: Server, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Durable queue, leases, retries.\n")
    image = tmp_path / "dot.png"
    image.write_bytes(_png())
    uploaded = user.cli("files", "upload", str(image), "--json")
    assert uploaded.returncode == 0, uploaded.stderr
    [made] = json.loads(uploaded.stdout)["data"]
    result = user.cli(
        "run", "Describe them", "--file", str(notes), "--file", made["file_id"], "--json"
    )
    assert result.returncode == 0, result.stderr
    assert "Uploaded" in result.stderr
    finished = json.loads(result.stdout)
    assert [part["filename"] for part in finished["input"]] == ["notes.txt", "dot.png"]
    assert "beginning: 'Durable queue, leases, retries.'" in finished["result"]
    listed = user.cli("files", "list")
    assert listed.returncode == 0 and "notes.txt" in listed.stdout and "dot.png" in listed.stdout
    missing = user.cli("run", "x", "--file", str(tmp_path / "missing.txt"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    (tmp_path / "empty.txt").write_text("")
    empty = user.cli("run", "x", "--file", str(tmp_path / "empty.txt"))
    assert empty.returncode == 1
    assert "(parameter: --file)" in empty.stderr
    back = user.cli("files", "download", made["file_id"], "-o", str(tmp_path / "back"), "--json")
    assert back.returncode == 0, back.stderr
    saved = json.loads(back.stdout)
    assert saved["file_id"] == made["file_id"]
    assert Path(saved["path"]).read_bytes() == image.read_bytes()
    gone = user.cli("files", "rm", made["file_id"])
    assert gone.returncode == 0 and f"Deleted {made['file_id']}" in gone.stdout


def test_a_threads_transcript_shows_a_prompts_parts_a_line_each(
    user: Server, tmp_path: Path, image_host: ImageHost
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Line one.\n")
    # The image URL is on loopback (the test server allows private targets): atrium fetches it.
    image_host.answers["/a.png"] = Answer(_png(), headers={"Content-Type": "image/png"})
    url = image_host.url("/a.png")
    result = user.cli("run", "Read it", "--file", str(notes), "--image-url", url, "--json")
    assert result.returncode == 0, result.stderr
    thread_id = json.loads(result.stdout)["thread_id"]
    transcript = user.cli("threads", "messages", thread_id)
    assert transcript.returncode == 0, transcript.stderr
    assert "  Read it\n  File file_" in transcript.stdout
    assert f"  Image {url} (image/png, {len(_png())} bytes):\n  [{url}: given as image/png]" in (
        transcript.stdout
    )
