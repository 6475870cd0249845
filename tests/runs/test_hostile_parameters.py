"""Hostile values in the runs group's own parameters: a cursor this API
never returned and a `Last-Event-ID` that is not an ASCII integer are 400s naming the
parameter, never a 500."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from atrium.kit.cursor import CURSOR_PATTERN
from tests.runs.helpers import RUNS, create_run

_PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def cursor_of(micros: str, row_id: str) -> str:
    """A cursor in its wire form: microseconds since 1970 UTC, a dot, the row's id."""
    return f"{micros}.{row_id}"


def assert_400_on(response: httpx.Response, parameter: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter


@pytest.mark.parametrize("micros", ["9" * 17, "-1", "+1", "1.5", "١", "", " 1", "0x10", "1e3"])
async def test_a_cursor_dated_out_of_its_form_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], micros: str
) -> None:
    response = await client.get(RUNS, params={"cursor": cursor_of(micros, "run_abc")}, headers=auth)
    assert_400_on(response, "cursor")


@pytest.mark.parametrize("row_id", ["run_a\x00b", "", "run_é", "run_a|b", "run_a.b", "x" * 100])
async def test_a_cursor_naming_no_possible_row_is_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], row_id: str
) -> None:
    response = await client.get(
        RUNS, params={"cursor": cursor_of("1767225600000000", row_id)}, headers=auth
    )
    assert_400_on(response, "cursor")


@_PROPERTY
@given(cursor=st.from_regex(CURSOR_PATTERN, fullmatch=True))
@example(cursor="9" * 16 + ".run_abc")  # the last microsecond a cursor can name: year 2286
@example(cursor="0.run_abc")
async def test_every_cursor_the_document_allows_is_a_page(
    client: httpx.AsyncClient, auth: dict[str, str], cursor: str
) -> None:
    """The OpenAPI document's pattern is the whole rule: what it allows pages."""
    response = await client.get(RUNS, params={"cursor": cursor}, headers=auth)
    assert response.status_code == 200, response.text


@_PROPERTY
@given(cursor=st.text(max_size=90))
async def test_any_cursor_is_a_page_or_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], cursor: str
) -> None:
    response = await client.get(RUNS, params={"cursor": cursor}, headers=auth)
    if re.fullmatch(CURSOR_PATTERN, cursor):
        assert response.status_code == 200, response.text
    else:
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


@pytest.fixture
async def run(client: httpx.AsyncClient, auth: dict[str, str]) -> dict[str, Any]:
    """One run for every example of a property test (Hypothesis runs the fixture once per
    test): a run created, and executed by the worker, per example was most of its CPU."""
    return await create_run(client, auth)


@_PROPERTY
@given(value=_HEADER_TEXT)
@example(value="²")
@example(value="1¹")
async def test_any_last_event_id_is_events_or_a_400(
    client: httpx.AsyncClient, auth: dict[str, str], run: dict[str, Any], value: str
) -> None:
    headers = [(name.encode(), header.encode()) for name, header in auth.items()]
    headers += [(b"Accept", b"application/json"), (b"Last-Event-ID", header_bytes(value))]
    response = await client.get(f"{RUNS}/{run['run_id']}/events", headers=headers)
    if response.status_code != 200:
        assert_400_on(response, "Last-Event-ID")
