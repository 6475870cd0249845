"""Shared pieces of the reliability tests: the one error body, seeded records of two accounts."""

from __future__ import annotations

import gc
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from atrium.app import create_app
from atrium.settings import Settings
from tests.runs.helpers import RUNS, create_run, wait_finished

# The app's own OpenAPI document; building it opens no database (the file is never created).
_UNUSED_DB = Path(tempfile.gettempdir()) / "atrium-openapi-only.db"
OPENAPI_DOCUMENT: dict[str, Any] = create_app(
    Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{_UNUSED_DB}", run_worker=False)
).openapi()

ERROR_CODES = {
    400: "INVALID_PARAMETER",
    401: "UNAUTHORIZED",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
}
# What must never appear in a response: traces, SQL, framework internals.
LEAK_MARKERS = (
    "Traceback",
    'File "',
    "sqlalchemy",
    "sqlite3.",
    "asyncpg",
    "psycopg",
    "pydantic_core",
)


@pytest.fixture(scope="module")
def frozen_heap() -> Iterator[None]:
    """For a module that sends thousands of requests: the heap built before it (imports, the
    OpenAPI document, schemathesis's and Hypothesis's state) is kept out of the collector's
    scans, and young collections are rarer. Each request leaves garbage behind that makes the
    collector run, and every older collection walked that whole heap, which never becomes
    garbage: a tenth of the fuzz module's CPU went to it (calibration ~17 ms). The heap stays
    frozen after the module: unfreezing would hand the session's frozen heap (tests/conftest.py)
    back to the collector too."""
    gc.collect()
    gc.freeze()
    thresholds = gc.get_threshold()
    gc.set_threshold(20_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


def error_problem(status: int, body: bytes, content_type: str) -> str | None:
    """Why an error response is not the one error body (docs/design.md#errors; None when it is)."""
    if not content_type.startswith("application/json"):
        return f"{status} with Content-Type {content_type!r}"
    try:
        document = json.loads(body)
    except ValueError:
        return f"{status} with a body that is not JSON: {body[:200]!r}"
    if not isinstance(document, dict) or set(document) != {"error"}:
        return f"{status} body is not {{'error': ...}}: {document!r}"
    error = document["error"]
    if not isinstance(error, dict) or set(error) != {"code", "message", "details"}:
        return f"{status} error object has other members: {error!r}"
    if not isinstance(error["message"], str) or not isinstance(error["details"], dict):
        return f"{status} error message/details have the wrong types: {error!r}"
    expected = ERROR_CODES.get(status)
    if expected is not None and error["code"] != expected:
        return f"{status} carries code {error['code']!r}, expected {expected!r}"
    return None


def leak_problem(body: bytes) -> str | None:
    text = body.decode("utf-8", "replace")
    for marker in LEAK_MARKERS:
        if marker in text:
            return f"response leaks {marker!r}: {text[:300]!r}"
    return None


def assert_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    problem = error_problem(status, response.content, response.headers.get("content-type", ""))
    assert problem is None, problem
    error: dict[str, Any] = response.json()["error"]
    return error


@dataclass
class Seeded:
    """Records of one account, made through the API, addressed by the paths that read them."""

    headers: dict[str, str]
    domain_id: int = 0
    space_id: int = 0
    agent_id: str = ""
    run_id: str = ""
    artifact_id: str = ""
    webhook_id: str = ""
    provider_id: str = ""
    thread_id: str = ""
    schedule_id: str = ""
    file_id: str = ""
    memory_item_id: str = ""
    # Of the account's tag: another account's block under the same label would be its own.
    block_label: str = ""
    alias: str = "prod"
    extra: dict[str, Any] = field(default_factory=dict)


async def seed_account(
    client: httpx.AsyncClient, headers: dict[str, str], tag: str, *, run: bool = True
) -> Seeded:
    """A domain, a space, an agent, a finished run with an artifact and its thread (unless `run`
    is False: the run is most of the cost; a thread without runs then), a webhook endpoint and
    a model provider (made after the run, on names that never resolve: nothing is ever sent to
    them)."""
    seeded = Seeded(headers=headers)
    domain = await client.post(
        "/api/v1/domains",
        data={"name": f"{tag}.example.com", "index_page": "https://example.com/"},
        headers=headers,
    )
    assert domain.status_code == 201, domain.text
    seeded.domain_id = domain.json()["data"]["id"]
    space = await client.post(
        "/api/v1/spaces", data={"name": f"space {tag}", "color": "3"}, headers=headers
    )
    assert space.status_code == 201, space.text
    seeded.space_id = space.json()["data"]["id"]
    agent = await client.post(
        "/v1/agents", json={"name": f"agent {tag}", "description": "seeded"}, headers=headers
    )
    assert agent.status_code == 201, agent.text
    seeded.agent_id = agent.json()["agent_id"]
    if run:
        made = await create_run(client, headers, f"seeded prompt {tag}", agent_id=seeded.agent_id)
        done = await wait_finished(client, headers, made["run_id"])
        assert done["status"] == "completed", done
        seeded.run_id = made["run_id"]
        seeded.artifact_id = done["artifacts"][0]["artifact_id"]
        seeded.thread_id = made["thread_id"]
    else:
        thread = await client.post("/api/v1/public/threads", json={}, headers=headers)
        assert thread.status_code == 201, thread.text
        seeded.thread_id = thread.json()["id"]
    webhook = await client.post(
        "/v1/webhooks", json={"url": f"https://{tag}.hooks.example.invalid/seed"}, headers=headers
    )
    assert webhook.status_code == 201, webhook.text
    seeded.webhook_id = webhook.json()["webhook_id"]
    provider = await client.post(
        "/v1/providers",
        json={"name": "seed", "base_url": f"https://{tag}.models.example.invalid/v1"},
        headers=headers,
    )
    assert provider.status_code == 201, provider.text
    seeded.provider_id = provider.json()["provider_id"]
    # Paused: it fires only when an operation triggers it.
    schedule = await client.post(
        "/v1/schedules",
        json={"prompt": f"scheduled prompt {tag}", "cron": "0 9 * * *", "paused": True},
        headers=headers,
    )
    assert schedule.status_code == 201, schedule.text
    seeded.schedule_id = schedule.json()["schedule_id"]
    upload = await client.post(
        "/api/v1/public/files",
        files={"file": (f"{tag}.txt", f"seeded file {tag}".encode(), "text/plain")},
        headers=headers,
    )
    assert upload.status_code == 201, upload.text
    seeded.file_id = upload.json()["file_id"]
    item = await client.put(
        "/v1/memory/items",
        json={"namespace": ["seed", "notes"], "key": tag, "value": {"note": f"seeded {tag}"}},
        headers=headers,
    )
    assert item.status_code in (200, 201), item.text
    seeded.memory_item_id = item.json()["item_id"]
    alias = await client.put(
        f"/v1/agents/{seeded.agent_id}/aliases/{seeded.alias}",
        json={"version": 1},
        headers=headers,
    )
    assert alias.status_code == 201, alias.text
    seeded.block_label = f"persona-{tag}"
    block = await client.post(
        "/v1/memory/blocks",
        json={"label": seeded.block_label, "value": f"seeded {tag}"},
        headers=headers,
    )
    assert block.status_code == 201, block.text
    return seeded


def path_values(seeded: Seeded, template: str) -> dict[str, str]:
    """The value of each path parameter of an operation's path template, from the account's
    records (the agent's first version and its alias for versions and aliases)."""
    return {
        "id": str(seeded.space_id if "/spaces/" in template else seeded.domain_id),
        "agent_id": seeded.agent_id,
        "run_id": seeded.run_id,
        "artifact_id": seeded.artifact_id,
        "webhook_id": seeded.webhook_id,
        "provider": seeded.provider_id,
        "thread_id": seeded.thread_id,
        "schedule_id": seeded.schedule_id,
        "file_id": seeded.file_id,
        "item_id": seeded.memory_item_id,
        "number": "1",
        "alias": seeded.alias,
        "label": seeded.block_label,
        # No eval is seeded: the fuzz reaches its 404 (an eval needs finished runs to store).
        "eval_id": "eval_seedednotstored",
    }


def resource_paths(seeded: Seeded) -> dict[str, str]:
    """Every record path of an account, by name (no run's when it was seeded without one)."""
    paths = {
        "domain": f"/api/v1/domains/{seeded.domain_id}",
        "space": f"/api/v1/spaces/{seeded.space_id}",
        "agent": f"/v1/agents/{seeded.agent_id}",
        "webhook": f"/v1/webhooks/{seeded.webhook_id}",
        "provider": f"/v1/providers/{seeded.provider_id}",
        "thread": f"/api/v1/public/threads/{seeded.thread_id}",
        "thread_messages": f"/api/v1/public/threads/{seeded.thread_id}/messages",
        "schedule": f"/v1/schedules/{seeded.schedule_id}",
        "schedule_firings": f"/v1/schedules/{seeded.schedule_id}/firings",
        "file": f"/api/v1/public/files/{seeded.file_id}",
        "file_content": f"/api/v1/public/files/{seeded.file_id}/content",
        "memory_item": f"/v1/memory/items/{seeded.memory_item_id}",
        "memory_item_history": f"/v1/memory/items/{seeded.memory_item_id}/history",
        "agent_version": f"/v1/agents/{seeded.agent_id}/versions/1",
        "agent_alias": f"/v1/agents/{seeded.agent_id}/aliases/{seeded.alias}",
        "memory_block": f"/v1/memory/blocks/{seeded.block_label}",
        "memory_block_history": f"/v1/memory/blocks/{seeded.block_label}/history",
    }
    if seeded.run_id:
        run = f"{RUNS}/{seeded.run_id}"
        paths["run"] = run
        paths["run_events"] = f"{run}/events"
        paths["run_artifacts"] = f"{run}/artifacts"
        paths["artifact_content"] = f"{run}/artifacts/{seeded.artifact_id}/content"
    return paths
