"""Hostile values in the runs group's own parameters (issue 15, item 6): a cursor this API
never returned and a `Last-Event-ID` that is not an ASCII integer are 400s naming the
parameter, never a 500."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.runs.helpers import RUNS, create_run

_PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cursor_of(raw: str) -> str:
    """`raw` in the cursor's wire form (url-safe base64 without padding)."""
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def assert_400_on(response: httpx.Response, parameter: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter


# Stamps at the edges of `datetime`: with an offset, year 1 and year 9999 overflow in UTC.
EDGE_STAMPS = [
    "0001-01-01T00:00:00+23:59",
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59.999999-23:59",
    "9999-12-31T23:59:59-00:01",
]


@pytest.mark.parametrize("stamp", EDGE_STAMPS)
async def test_a_cursor_dated_out_of_range_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], stamp: str
) -> None:
    response = await client.get(
        RUNS, params={"cursor": cursor_of(f"{stamp}|run_abc")}, headers=auth
    )
    assert_400_on(response, "cursor")


@pytest.mark.parametrize("row_id", ["run_a\x00b", "", "run_é", "run_a|b", "x" * 100])
async def test_a_cursor_naming_no_possible_row_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], row_id: str
) -> None:
    response = await client.get(
        RUNS, params={"cursor": cursor_of(f"2026-01-01T00:00:00+00:00|{row_id}")}, headers=auth
    )
    assert_400_on(response, "cursor")


_OFFSETS = st.integers(min_value=-1439, max_value=1439).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
_STAMPS = st.datetimes(timezones=st.none() | _OFFSETS).map(datetime.isoformat) | st.text(
    max_size=40
)
_IDS = st.from_regex(r"run_[A-Za-z0-9]{1,30}", fullmatch=True) | st.text(max_size=40)


@_PROPERTY
@given(stamp=_STAMPS, row_id=_IDS)
@example(stamp="0001-01-01T00:00:00+23:59", row_id="run_abc")
async def test_any_cursor_is_a_page_or_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], stamp: str, row_id: str
) -> None:
    response = await client.get(
        RUNS, params={"cursor": cursor_of(f"{stamp}|{row_id}")}, headers=auth
    )
    if response.status_code != 200:
        assert_400_on(response, "cursor")


def header_bytes(value: str) -> bytes:
    """A header value on the wire: Latin-1 when it fits (what a server decodes), else UTF-8."""
    try:
        return value.encode("latin-1")
    except UnicodeEncodeError:
        return value.encode()


@pytest.mark.parametrize("value", ["²", "1¹", "١", "１２", "9" * 13, "-1", "+1", "1.0", "1 2"])
async def test_a_last_event_id_that_is_not_an_ascii_integer_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], value: str
) -> None:
    run = await create_run(client, auth)
    for accept in (b"text/event-stream", b"application/json"):
        headers = [(name.encode(), header.encode()) for name, header in auth.items()]
        headers += [(b"Accept", accept), (b"Last-Event-ID", header_bytes(value))]
        response = await client.get(f"{RUNS}/{run['run_id']}/events", headers=headers)
        assert_400_on(response, "Last-Event-ID")


# What a header can carry: Latin-1 text without CR, LF or NUL (servers refuse those).
_HEADER_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"),
    max_size=20,
)


@_PROPERTY
@given(value=_HEADER_TEXT)
@example(value="²")
@example(value="1¹")
async def test_any_last_event_id_is_events_or_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], value: str
) -> None:
    run = await create_run(client, auth)
    headers = [(name.encode(), header.encode()) for name, header in auth.items()]
    headers += [(b"Accept", b"application/json"), (b"Last-Event-ID", header_bytes(value))]
    response = await client.get(f"{RUNS}/{run['run_id']}/events", headers=headers)
    if response.status_code != 200:
        assert_400_on(response, "Last-Event-ID")
