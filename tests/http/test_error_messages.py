"""Error messages speak atrium's words, never the framework's: no "Value error, …", no
"Input should be a valid dictionary", no "Extra inputs are not permitted"."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.agents.test_validation import BAD_BODIES
from tests.runs.helpers import RUNS

FRAMEWORK_WORDS = ("Value error", "Input should", "Extra inputs", "dictionary", "pydantic")


def _message(response: httpx.Response, parameter: str) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["details"]["parameter"] == parameter
    message: str = error["message"]
    assert not [word for word in FRAMEWORK_WORDS if word in message], message
    return message


@pytest.mark.parametrize(("body", "parameter"), BAD_BODIES)
async def test_agent_body_errors_are_in_atriums_words(
    client: httpx.AsyncClient, auth: dict[str, str], body: Any, parameter: str
) -> None:
    message = _message(await client.post("/v1/agents", json=body, headers=auth), parameter)
    assert message.startswith(parameter) or message.startswith("request body"), message


@pytest.mark.parametrize("key", ["model", "temperature", "instructions", "tools"])
async def test_a_config_key_at_the_top_says_where_it_belongs(
    client: httpx.AsyncClient, auth: dict[str, str], key: str
) -> None:
    body = {"name": "a", key: "openai:gpt-4o"}
    message = _message(await client.post("/v1/agents", json=body, headers=auth), key)
    assert message == f"{key} belongs in config.{key}"


async def test_an_unknown_run_field_is_named(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    response = await client.post(RUNS, json={"prompt": "hi", "colour": "red"}, headers=auth)
    assert _message(response, "colour") == "colour is not a field of this request"


@pytest.mark.parametrize("day", ["2026-02-30", "2026-13-01", "2025-02-29"])
async def test_an_impossible_date_is_not_a_calendar_date(
    client: httpx.AsyncClient, auth: dict[str, str], day: str
) -> None:
    response = await client.get("/v1/analytics/usage", params={"start_date": day}, headers=auth)
    assert _message(response, "start_date") == f"start_date {day} is not a calendar date"


@pytest.mark.parametrize("day", ["26-01-01", "2026-1-1", "２０２６-01-01", "yesterday"])
async def test_a_malformed_date_says_how_to_write_it(
    client: httpx.AsyncClient, auth: dict[str, str], day: str
) -> None:
    response = await client.get("/v1/analytics/usage", params={"end_date": day}, headers=auth)
    assert _message(response, "end_date") == "end_date must be a date written YYYY-MM-DD"
