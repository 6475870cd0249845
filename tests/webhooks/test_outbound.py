"""Deliveries go through the outbound rule (docs/design.md#outbound), and a receiver's reply
cannot forge log lines: names resolve on a DNS server of the test's own, on loopback, like the
receiver."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest

from tests.dns_server import DNSServer, dns_server
from tests.runs.helpers import create_run, wait_finished
from tests.webhooks.conftest import FAST
from tests.webhooks.receiver import Receiver, verify

__all__ = ["dns_server"]

HOOKS = "/v1/webhooks"
# Every character that could end, forge or garble a log line.
_CONTROL = {chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)]} | {"\u2028", "\u2029"}


@pytest.fixture
def allow_private() -> bool:
    return True


@pytest.fixture
def settings_overrides(dns_server: DNSServer, allow_private: bool) -> dict[str, object]:
    return {**FAST, "dns_nameservers": [dns_server.address], "allow_private_targets": allow_private}


async def _first_attempt(
    client: httpx.AsyncClient, auth: dict[str, str], run_id: str
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + 20
    while True:
        response = await client.get(f"{HOOKS}/deliveries", params={"run_id": run_id}, headers=auth)
        rows: list[dict[str, Any]] = response.json()["data"]
        if rows and rows[0]["attempts"] >= 1:
            return rows[0]
        assert asyncio.get_running_loop().time() < deadline, rows
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("allow_private", [False])
@pytest.mark.parametrize("address", ["127.0.0.1", "100.100.100.200", "fec0::1"])
async def test_a_name_pointing_at_a_non_public_address_is_refused_at_send_time(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    receiver: Receiver,
    dns_server: DNSServer,
    address: str,
) -> None:
    # Registration passes (a name is judged where it points when connecting); the attempt
    # resolves it, finds a non-public address and connects to nothing.
    dns_server.records["hooks.test"] = {"AAAA" if ":" in address else "A": [address]}
    url = f"http://hooks.test:{receiver.port}/x"
    created = await client.post(HOOKS, json={"url": url}, headers=auth)
    assert created.status_code == 201, created.text
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    row = await _first_attempt(client, auth, run["run_id"])
    assert row["error"].startswith(f"target refused: hooks.test ({address}) is not a public"), row
    assert "ATRIUM_ALLOW_PRIVATE_TARGETS=true" in row["error"]
    assert row["response_status"] is None and row["status"] == "pending"
    assert receiver.received == []


async def test_a_delivery_connects_to_the_address_it_resolved(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver, dns_server: DNSServer
) -> None:
    """The sender resolves the name itself (the system resolver knows no `hooks.test`), then
    connects to that address; the receiver sees the name in the Host header."""
    dns_server.answer_in_turn("hooks.test", "A", [["127.0.0.1"], ["127.0.0.2"]])
    url = f"http://hooks.test:{receiver.port}/pinned"
    created = await client.post(HOOKS, json={"url": url}, headers=auth)
    assert created.status_code == 201, created.text
    run = await create_run(client, auth)
    (item,) = await receiver.wait_for("/pinned", 1)
    assert item.headers["host"] == f"hooks.test:{receiver.port}"
    assert verify(created.json()["secret"], item)["run_id"] == run["run_id"]
    assert sorted(dns_server.asked("hooks.test")) == ["A", "AAAA"]


async def test_a_receivers_reply_reaches_the_log_escaped(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    receiver: Receiver,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="atrium.webhooks")
    reply = b"\x1b[31mred\x1b[0m\r\n2026-01-01 INFO atrium: forged line\x07\xc2\x85\xe2\x80\xa8end"
    receiver.script["/loud"] = [("answer", (500, reply))]
    await client.post(HOOKS, json={"url": receiver.url("/loud")}, headers=auth)
    run = await create_run(client, auth)
    await wait_finished(client, auth, run["run_id"])
    await _first_attempt(client, auth, run["run_id"])
    (line,) = [
        record.getMessage()
        for record in caplog.records
        if record.name == "atrium.webhooks" and ": 500 " in record.getMessage()
    ]
    assert not _CONTROL & set(line), repr(line)
    assert "\\x1b[31mred\\x1b[0m\\r\\n2026-01-01 INFO atrium: forged line\\x07" in line
    assert line.endswith("\\x85\\u2028end")
