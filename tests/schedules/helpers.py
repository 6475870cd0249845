"""Helpers of the schedules tests: HTTP only."""

from __future__ import annotations

from typing import Any

import httpx

SCHEDULES = "/v1/schedules"
RUNS = "/api/v1/public/agent/runs"


async def create(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(
        SCHEDULES, json={"prompt": "Report the weather", **body}, headers=auth
    )
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


async def firings(
    client: httpx.AsyncClient, auth: dict[str, str], schedule_id: str
) -> list[dict[str, Any]]:
    """Every firing of the schedule, oldest fire time first."""
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        response = await client.get(
            f"{SCHEDULES}/{schedule_id}/firings",
            params={"limit": 100, "cursor": cursor},
            headers=auth,
        )
        assert response.status_code == 200, response.text
        page = response.json()
        found += page["data"]
        if not page["has_more"]:
            return found[::-1]
        cursor = page["next_cursor"]


async def runs_of(
    client: httpx.AsyncClient, auth: dict[str, str], schedule_id: str
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        response = await client.get(
            RUNS, params={"schedule_id": schedule_id, "limit": 100, "cursor": cursor}, headers=auth
        )
        assert response.status_code == 200, response.text
        page = response.json()
        found += page["data"]
        if not page["has_more"]:
            return found
        cursor = page["next_cursor"]
