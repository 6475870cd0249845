"""Account, agents and analytics through the client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from atrium.client import AsyncClient, AuthenticationError, Client, InvalidParameterError
from tests.client.conftest import BOOTSTRAP_KEY, Server


def test_account_tells_who_the_key_acts_for(server: Server) -> None:
    premium = server.new_key(tier="premium")
    with Client(server.url, premium) as client:
        account = client.account()
    assert account.key.tier == "premium"
    assert account.account.name.startswith("test-")  # new_account_key's accounts
    with Client(server.url, BOOTSTRAP_KEY) as client:
        assert client.account().account.name == "default"


def test_agents_crud(atrium: Client) -> None:
    created = atrium.agents.create(
        "writer",
        description="writes things",
        config={"model": "atrium:offline", "temperature": 0.2, "instructions": "Be brief."},
    )
    assert created.agent_id.startswith("agt_")
    assert (created.config.model, created.config.temperature) == ("atrium:offline", 0.2)
    assert created.config.instructions == "Be brief."

    assert created.agent_id in {agent.agent_id for agent in atrium.agents.list()}
    assert atrium.agents.get(created.agent_id).description == "writes things"

    updated = atrium.agents.update(created.agent_id, config={"temperature": 1.5})
    assert updated.config.temperature == 1.5
    assert updated.config.instructions == "Be brief.", "config keys merge"
    assert updated.name == "writer"

    deleted = atrium.agents.delete(created.agent_id)
    assert deleted.agent_id == created.agent_id and deleted.deleted
    assert created.agent_id not in {agent.agent_id for agent in atrium.agents.list()}


def test_agent_errors_carry_code_message_and_details(atrium: Client) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        atrium.agents.create("hot", config={"temperature": 5})
    error = caught.value
    assert (error.status_code, error.code) == (400, "INVALID_PARAMETER")
    assert error.details["parameter"] == "config.temperature"
    assert error.parameter == "config.temperature"
    assert "temperature" in error.message or error.message
    assert error.request_id


def test_a_bad_key_is_an_authentication_error(server: Server) -> None:
    with (
        Client(server.url, "atr_not-a-real-key-000000000000000000") as client,
        pytest.raises(AuthenticationError) as caught,
    ):
        client.agents.list()
    assert caught.value.status_code == 401
    assert caught.value.code == "UNAUTHORIZED"


async def test_usage_counts_a_finished_run(async_atrium: AsyncClient) -> None:
    run = await async_atrium.runs.create("count me")
    finished = await async_atrium.runs.wait(run.run_id, timeout=30)
    assert finished.billing is not None

    today = datetime.now(UTC).date()
    report = await async_atrium.analytics.usage(
        start_date=today - timedelta(days=6), end_date=today
    )
    assert (report.start_date, report.end_date) == (today - timedelta(days=6), today)
    assert [day.date for day in report.daily] == [today - timedelta(days=6 - i) for i in range(7)]
    assert report.totals.runs == 1 and report.totals.completed == 1
    assert report.totals.credits == pytest.approx(finished.billing.credits)
    assert report.daily[-1].runs == 1
    assert [agent.agent_id for agent in report.agents] == [finished.agent_id]

    only = await async_atrium.analytics.usage(agent_id=finished.agent_id)
    assert len(only.daily) == 30, "the default range is the last 30 days"
    assert only.agent_id == finished.agent_id

    with pytest.raises(InvalidParameterError) as caught:
        await async_atrium.analytics.usage(start_date=today, end_date=today - timedelta(days=1))
    assert caught.value.parameter in ("start_date", "end_date")
