"""A 100 MB upload leaves a server's memory flat: its bytes stream to a spooled temporary file
and on to the store, the cap is applied as they arrive. Measured by the server process's peak
resident size (VmHWM), not by time."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import atrium_env, free_port, start_atrium, stop_process, wait_for_http

MB = 1_048_576
SIZE = 100 * MB
# What the server may grow by while it takes a 100 MB upload: its buffers, not the file.
ALLOWED_GROWTH = 40 * MB
BOUNDARY = "atrium-test-boundary"


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _body(size: int) -> Iterator[bytes]:
    """A multipart body with one text file of `size` bytes, produced a chunk at a time."""
    yield (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    line = b"0123456789abcdef" * 4095 + b"0123456789abcde\n"  # 65,536 bytes
    for _ in range(size // len(line)):
        yield line
    yield f"\r\n--{BOUNDARY}--\r\n".encode()


def _stored(folder: Path) -> list[str]:
    """The files in the store's folder (made by the first upload)."""
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


def _framing() -> int:
    return sum(len(chunk) for chunk in _body(0))


def _serve(
    tmp_path_factory: pytest.TempPathFactory, **settings: str
) -> Iterator[tuple[str, int, str, Path]]:
    tmp = tmp_path_factory.mktemp("upload-memory")
    port, key = free_port(), "atr_" + secrets.token_urlsafe(32)
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY=key,
        ATRIUM_FILE_DIR=str(tmp / "files"),
        PYTHONUNBUFFERED="1",
        **settings,
    )
    log = tmp / "serve.log"
    log.write_text("")
    process = start_atrium(["serve", "--no-worker", "--port", str(port)], env=env, output=log)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/healthz", process=process, log=log)
        yield f"http://127.0.0.1:{port}", process.pid, key, tmp / "files"
    finally:
        stop_process(process)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, str, Path]]:
    yield from _serve(
        tmp_path_factory, ATRIUM_FILE_STORAGE="disk", ATRIUM_FILE_MAX_BYTES=str(150 * MB)
    )


@pytest.fixture(scope="module")
def default_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[str, int, str, Path]]:
    """The defaults: files in the database (which holds a whole file to insert it), 20 MiB."""
    yield from _serve(tmp_path_factory)


def _upload(base: str, key: str, size: int, *, sized: bool) -> httpx.Response:
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
    }
    if sized:
        headers["Content-Length"] = str(size + _framing())
    with httpx.Client(timeout=120) as client:
        return client.post(f"{base}/api/v1/public/files", content=_body(size), headers=headers)


def test_a_100_mb_upload_keeps_memory_flat(server: tuple[str, int, str, Path]) -> None:
    base, pid, key, folder = server
    warm = _upload(base, key, 2 * MB, sized=True)  # the first upload's imports and buffers
    assert warm.status_code == 201, warm.text
    before = _peak_rss(pid)
    made = _upload(base, key, SIZE, sized=True)
    assert made.status_code == 201, made.text
    assert made.json()["size_bytes"] == SIZE
    assert (folder / made.json()["file_id"]).stat().st_size == SIZE
    chunked = _upload(base, key, SIZE, sized=False)  # no Content-Length: read as it comes
    assert chunked.status_code == 201, chunked.text
    growth = _peak_rss(pid) - before
    print(f"peak RSS {before / MB:.1f} MB before, +{growth / MB:.1f} MB after two 100 MB uploads")
    assert growth < ALLOWED_GROWTH


def test_an_upload_over_the_cap_is_refused_as_it_arrives(
    server: tuple[str, int, str, Path],
) -> None:
    base, pid, key, folder = server
    before = _peak_rss(pid)
    stored = _stored(folder)
    # Declared too large: refused before a byte is read.
    sized = _upload(base, key, 160 * MB, sized=True)
    assert sized.status_code == 400, sized.text
    assert sized.json()["error"]["details"]["parameter"] == "file"
    # Chunked: read up to the cap, then refused; the client may see the answer or a reset.
    try:
        chunked = _upload(base, key, 160 * MB, sized=False)
        assert chunked.status_code == 400, chunked.text
    except httpx.TransportError:
        pass
    assert _stored(folder) == stored
    assert _peak_rss(pid) - before < ALLOWED_GROWTH
    healthy = httpx.get(f"{base}/api/v1/public/files", headers={"Authorization": f"Bearer {key}"})
    assert healthy.status_code == 200


def test_100_mb_over_the_default_cap_is_refused_with_memory_flat(
    default_server: tuple[str, int, str, Path],
) -> None:
    """The database store reads a file whole to insert it: the cap, applied while the bytes
    arrive, is what keeps a 100 MB upload from ever being read."""
    base, pid, key, _ = default_server
    warm = _upload(base, key, 1 * MB, sized=True)
    assert warm.status_code == 201, warm.text
    before = _peak_rss(pid)
    sized = _upload(base, key, SIZE, sized=True)  # refused on its Content-Length
    assert sized.status_code == 400, sized.text
    try:  # chunked: refused at the 20 MiB cap, the rest never read
        chunked = _upload(base, key, SIZE, sized=False)
        assert chunked.status_code == 400, chunked.text
        assert chunked.json()["error"]["details"]["parameter"] == "file"
    except httpx.TransportError:
        pass
    growth = _peak_rss(pid) - before
    print(
        f"database store, 20 MiB cap: peak RSS {before / MB:.1f} MB before, +{growth / MB:.1f} MB "
        "after two 100 MB uploads refused"
    )
    assert growth < ALLOWED_GROWTH
    listed = httpx.get(f"{base}/api/v1/public/files", headers={"Authorization": f"Bearer {key}"})
    assert [item["filename"] for item in listed.json()["data"]] == ["big.txt"]  # the warm-up
