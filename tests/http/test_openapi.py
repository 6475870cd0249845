"""The OpenAPI document describes the real error body, auth and rate-limit headers."""

from __future__ import annotations

from typing import Any

import httpx

from atrium.http.groups import group_for


async def test_openapi_documents_errors_and_rate_headers(client: httpx.AsyncClient) -> None:
    document: dict[str, Any] = (await client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
    grouped = 0
    for path, item in document["paths"].items():
        for operation in item.values():
            responses = operation["responses"]
            assert "422" not in responses, path
            if group_for(path) is None:
                continue
            grouped += 1
            assert operation["security"] == [{"bearerAuth": []}]
            for status in ("400", "401", "404", "429"):
                ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/Error"
            for response in responses.values():
                assert set(response["headers"]) >= {
                    "X-RateLimit-Limit",
                    "X-RateLimit-Remaining",
                    "X-RateLimit-Reset",
                }
            assert "Retry-After" in responses["429"]["headers"]
    assert grouped >= 10
