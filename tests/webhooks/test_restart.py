"""A delivery survives a server restart: the run finishes while its receiver is down, the server
is killed (SIGKILL), the receiver comes up, the server starts again and delivers, once, with the
same `webhook-id`. Real `atrium serve` processes on one SQLite file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from tests.processes import free_port
from tests.runs.helpers import RUNS
from tests.webhooks.receiver import Receiver, verify
from tests.worker.processes import Servers, process_env


async def _deliveries(api: httpx.AsyncClient, webhook_id: str) -> list[dict[str, Any]]:
    response = await api.get(f"/v1/webhooks/{webhook_id}/deliveries")
    assert response.status_code == 200, response.text
    rows: list[dict[str, Any]] = response.json()["data"]
    return rows


async def test_a_delivery_survives_a_server_restart(tmp_path: Path) -> None:
    receiver = Receiver(free_port())  # not listening yet: connections are refused
    env = process_env(
        tmp_path,
        webhook_allow_private_targets="true",  # the older name, still read
        webhook_backoff_seconds="2",
        webhook_backoff_factor="1",
        webhook_poll_seconds="0.2",
        webhook_timeout_seconds="2",
        # The two servers listen on different ports; clients reach both at one address (as
        # behind a proxy), so the payload the first one stored and the second's GET agree.
        public_url="http://127.0.0.1:8000",
    )
    servers = Servers(tmp_path, env)
    try:
        first = await servers.serve("first")
        async with servers.api(first) as api:
            created = await api.post("/v1/webhooks", json={"url": receiver.url()})
            assert created.status_code == 201, created.text
            hook = created.json()
            run = await api.post(RUNS, json={"prompt": "outlive me"})
            assert run.status_code == 201, (run.text, first.log.read_text()[-3000:])
            run_id = run.json()["run_id"]
            for _ in range(400):
                rows = await _deliveries(api, hook["webhook_id"])
                if rows and rows[0]["attempts"] >= 1:
                    break
                await asyncio.sleep(0.02)
            (row,) = rows
            assert row["status"] == "pending" and row["run_id"] == run_id, row
            assert row["error"].startswith("ConnectError") and row["response_status"] is None
            assert row["next_attempt_at"] is not None
            assert (await api.get(f"{RUNS}/{run_id}")).json()["status"] == "completed"
        first.kill()

        receiver.start()
        await asyncio.sleep(1.0)
        assert receiver.received == []  # nobody sends while the server is down

        second = await servers.serve("second")
        (item,) = await receiver.wait_for("/hook", 1, within=30)
        assert item.webhook_id == row["delivery_id"]
        async with servers.api(second) as api:
            assert verify(hook["secret"], item) == (await api.get(f"{RUNS}/{run_id}")).json()
            for _ in range(200):
                (after,) = await _deliveries(api, hook["webhook_id"])
                if after["status"] == "delivered":
                    break
                await asyncio.sleep(0.02)
            assert after["status"] == "delivered" and after["response_status"] == 200
            assert after["attempts"] >= 2 and after["delivery_id"] == row["delivery_id"]
        await asyncio.sleep(1.0)
        assert len(receiver.received) == 1
    finally:
        servers.stop()
        receiver.stop()
