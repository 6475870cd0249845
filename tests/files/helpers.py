"""Helpers of the files tests: sample files and uploads over HTTP."""

from __future__ import annotations

import struct
import zlib
from typing import Any

import httpx

FILES = "/api/v1/public/files"


def png(width: int = 2, height: int = 2) -> bytes:
    """A valid PNG of grey pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def pdf(text: str = "hello") -> bytes:
    """A small PDF (enough for type sniffing and for a model's document part)."""
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% "
        + text.encode()
        + b"\ntrailer << /Root 1 0 R >>\n%%EOF\n"
    )


async def upload(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    name: str,
    data: bytes,
    content_type: str = "application/octet-stream",
) -> httpx.Response:
    return await client.post(FILES, files={"file": (name, data, content_type)}, headers=auth)


async def uploaded(
    client: httpx.AsyncClient, auth: dict[str, str], name: str, data: bytes
) -> dict[str, Any]:
    response = await upload(client, auth, name, data)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def refused(response: httpx.Response, parameter: str) -> str:
    """The message of a 400 naming `parameter`."""
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert (error["code"], error["details"]["parameter"]) == ("INVALID_PARAMETER", parameter)
    message: str = error["message"]
    return message
