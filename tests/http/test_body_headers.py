"""The gateway's body headers: a `Content-Length` that is not an ASCII integer is judged by
what follows (no 500: `str.isdigit` accepts "²", which `int()` refuses)."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize("length", ["²", "1¹", "³²"])
async def test_a_content_length_of_other_digits_is_no_500(
    client: httpx.AsyncClient, auth: dict[str, str], length: str
) -> None:
    headers = [(name.encode(), value.encode()) for name, value in auth.items()]
    headers += [
        (b"Content-Type", b"application/json"),
        (b"Content-Length", length.encode("latin-1")),
    ]
    response = await client.post("/v1/agents", content=b'{"name": "x"}', headers=headers)
    assert response.status_code < 500, response.text
