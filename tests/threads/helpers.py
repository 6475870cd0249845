"""Helpers of the threads tests: HTTP only."""

from __future__ import annotations

from typing import Any

import httpx

THREADS = "/api/v1/public/threads"


async def create_thread(
    client: httpx.AsyncClient, auth: dict[str, str], **body: Any
) -> dict[str, Any]:
    response = await client.post(THREADS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    thread: dict[str, Any] = response.json()
    return thread


async def get_thread(
    client: httpx.AsyncClient, auth: dict[str, str], thread_id: str
) -> dict[str, Any]:
    response = await client.get(f"{THREADS}/{thread_id}", headers=auth)
    assert response.status_code == 200, response.text
    thread: dict[str, Any] = response.json()
    return thread


async def all_messages(
    client: httpx.AsyncClient, auth: dict[str, str], thread_id: str, limit: int = 100
) -> list[dict[str, Any]]:
    """Every item of the thread's conversation, page after page."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        response = await client.get(f"{THREADS}/{thread_id}/messages", params=params, headers=auth)
        assert response.status_code == 200, response.text
        page = response.json()
        items.extend(page["data"])
        assert page["has_more"] == (page["next_cursor"] is not None)
        if not page["has_more"]:
            return items
        cursor = page["next_cursor"]
