"""`GET /v1/analytics/usage`: ranges, defaults, limits, agent filter, deleted and foreign agents."""

from __future__ import annotations

import datetime
from typing import Any

import httpx
import pytest

from atrium.auth.service import IssuedKey
from tests.analytics.conftest import Recorder
from tests.conftest import KeyFactory, bearer

COUNTERS = {
    "runs",
    "completed",
    "failed",
    "cancelled",
    "input_tokens",
    "output_tokens",
    "credits",
    "requests",
    "requires_action",
}
ZERO = dict.fromkeys(COUNTERS, 0)
D = datetime.date


async def _agent(client: httpx.AsyncClient, auth: dict[str, str], name: str) -> str:
    response = await client.post("/v1/agents", json={"name": name}, headers=auth)
    agent_id: str = response.json()["agent_id"]
    return agent_id


async def _usage(client: httpx.AsyncClient, auth: dict[str, str], **params: str) -> dict[str, Any]:
    response = await client.get("/v1/analytics/usage", params=params, headers=auth)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


async def test_shape_and_default_range_of_30_days_ending_today(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await _agent(client, auth, "Idle")
    body = await _usage(client, auth)
    today = _today()
    assert set(body) == {
        "start_date",
        "end_date",
        "agent_id",
        "totals",
        "daily",
        "agents",
        "versions",
    }
    assert body["end_date"] == today.isoformat()
    assert body["start_date"] == (today - datetime.timedelta(days=29)).isoformat()
    assert body["agent_id"] is None
    assert body["totals"] == ZERO
    assert len(body["daily"]) == 30
    assert body["daily"][0] == {"date": body["start_date"], **ZERO}
    assert body["daily"][-1]["date"] == body["end_date"]
    assert body["agents"] == [{"agent_id": agent_id, "name": "Idle", **ZERO}]


async def test_only_end_date_counts_back_29_days(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    body = await _usage(client, auth, end_date="2026-03-01")
    assert (body["start_date"], body["end_date"]) == ("2026-01-31", "2026-03-01")
    assert [row["date"] for row in body["daily"]][:2] == ["2026-01-31", "2026-02-01"]


async def test_only_start_date_runs_to_today(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    start = _today() - datetime.timedelta(days=3)
    body = await _usage(client, auth, start_date=start.isoformat())
    assert body["end_date"] == _today().isoformat()
    assert len(body["daily"]) == 4


async def test_a_single_day_and_the_longest_range(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    one = await _usage(client, auth, start_date="2024-02-29", end_date="2024-02-29")
    assert [row["date"] for row in one["daily"]] == ["2024-02-29"]
    longest = await _usage(client, auth, start_date="2024-01-01", end_date="2024-12-31")
    assert len(longest["daily"]) == 366
    assert longest["daily"][59]["date"] == "2024-02-29"


@pytest.mark.parametrize(
    ("params", "parameter"),
    [
        ({"start_date": "2026-13-01"}, "start_date"),
        ({"start_date": "2026-02-30"}, "start_date"),
        ({"start_date": "2026-1-1"}, "start_date"),
        ({"start_date": "20260101"}, "start_date"),
        ({"start_date": "2026-01-01T00:00:00Z"}, "start_date"),
        ({"start_date": ""}, "start_date"),
        ({"end_date": "yesterday"}, "end_date"),
        ({"end_date": "1767225600"}, "end_date"),
        ({"start_date": "2026-03-02", "end_date": "2026-03-01"}, "start_date"),
        ({"start_date": "2025-01-01", "end_date": "2026-01-02"}, "start_date"),
        ({"start_date": "2000-01-01"}, "start_date"),
    ],
)
async def test_bad_dates_and_ranges_are_400(
    client: httpx.AsyncClient, auth: dict[str, str], params: dict[str, str], parameter: str
) -> None:
    response = await client.get("/v1/analytics/usage", params=params, headers=auth)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "INVALID_PARAMETER"
    assert response.json()["error"]["details"] == {"parameter": parameter}


async def test_counts_land_on_their_day_and_agent(
    client: httpx.AsyncClient, auth: dict[str, str], api_key: IssuedKey, record: Recorder
) -> None:
    first = await _agent(client, auth, "First")
    second = await _agent(client, auth, "Second")
    account = api_key.account_id
    await record(
        account_id=account,
        agent_id=first,
        day=D(2026, 5, 1),
        status="completed",
        input_tokens=100,
        output_tokens=50,
        credits_micro=1_250_000,
        requests=3,
    )
    await record(
        account_id=account,
        agent_id=second,
        day=D(2026, 5, 3),
        status="failed",
        input_tokens=7,
        requests=1,
    )
    await record(account_id=account, agent_id=second, day=D(2026, 5, 3), status="cancelled")
    await record(
        account_id=account, agent_id=first, day=D(2026, 4, 30), status="completed", input_tokens=1
    )  # outside the range

    body = await _usage(client, auth, start_date="2026-05-01", end_date="2026-05-03")
    assert body["totals"] == {
        **ZERO,
        "runs": 3,
        "completed": 1,
        "failed": 1,
        "cancelled": 1,
        "input_tokens": 107,
        "output_tokens": 50,
        "credits": 1.25,
        "requests": 4,
    }
    assert body["daily"] == [
        {
            "date": "2026-05-01",
            **ZERO,
            "runs": 1,
            "completed": 1,
            "input_tokens": 100,
            "output_tokens": 50,
            "credits": 1.25,
            "requests": 3,
        },
        {"date": "2026-05-02", **ZERO},
        {
            "date": "2026-05-03",
            **ZERO,
            "runs": 2,
            "failed": 1,
            "cancelled": 1,
            "input_tokens": 7,
            "requests": 1,
        },
    ]
    assert [(row["agent_id"], row["name"], row["runs"]) for row in body["agents"]] == [
        (first, "First", 1),
        (second, "Second", 2),
    ]

    only_second = await _usage(
        client, auth, start_date="2026-05-01", end_date="2026-05-03", agent_id=second
    )
    assert only_second["agent_id"] == second
    assert only_second["totals"]["runs"] == 2
    assert only_second["daily"][0] == {"date": "2026-05-01", **ZERO}
    assert [row["agent_id"] for row in only_second["agents"]] == [second]


async def test_unknown_or_foreign_agent_is_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    other = bearer((await make_key()).key)
    foreign = await _agent(client, other, "Theirs")
    for agent_id in ("agt_unknown", foreign, "\x00", "x" * 5000):
        response = await client.get(
            "/v1/analytics/usage", params={"agent_id": agent_id}, headers=auth
        )
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"
        assert response.json()["error"]["details"] == {"parameter": "agent_id"}


async def test_other_accounts_usage_is_not_counted(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_key: KeyFactory,
    record: Recorder,
) -> None:
    other_key = await make_key()
    theirs = await _agent(client, bearer(other_key.key), "Theirs")
    await record(
        account_id=other_key.account_id,
        agent_id=theirs,
        day=_today(),
        status="completed",
        input_tokens=5,
    )
    body = await _usage(client, auth)
    assert body["totals"] == ZERO
    assert body["agents"] == []
    assert (await _usage(client, bearer(other_key.key)))["totals"]["runs"] == 1


async def test_deleted_agents_keep_their_usage(
    client: httpx.AsyncClient, auth: dict[str, str], api_key: IssuedKey, record: Recorder
) -> None:
    kept = await _agent(client, auth, "Kept")
    gone = await _agent(client, auth, "Gone")
    await record(
        account_id=api_key.account_id,
        agent_id=gone,
        day=D(2026, 6, 10),
        status="completed",
        output_tokens=9,
        credits_micro=3,
    )
    assert (await client.delete(f"/v1/agents/{gone}", headers=auth)).status_code == 200

    with_usage = await _usage(client, auth, start_date="2026-06-01", end_date="2026-06-30")
    assert with_usage["totals"]["output_tokens"] == 9
    assert with_usage["totals"]["credits"] == 0.000003
    assert [(row["agent_id"], row["name"]) for row in with_usage["agents"]] == [
        (kept, "Kept"),
        (gone, "Gone"),
    ]
    without = await _usage(client, auth, start_date="2026-07-01", end_date="2026-07-30")
    assert [row["agent_id"] for row in without["agents"]] == [kept]
    filtered = await _usage(
        client, auth, start_date="2026-06-01", end_date="2026-06-30", agent_id=gone
    )
    assert filtered["totals"]["runs"] == 1
