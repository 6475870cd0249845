"""Served domains: requests whose Host is a stored domain are redirected
(docs/design.md#domain-verification)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from atrium.app import create_app
from atrium.auth.service import IssuedKey
from atrium.db.engine import Database
from atrium.settings import Settings
from tests.conftest import bearer
from tests.domains.conftest import DomainFactory
from tests.statements import Statement, recorded

INDEX = "https://landing.example.org/welcome"
MISSING = "https://landing.example.org/missing"


@pytest.fixture
async def served(api_key: IssuedKey, make_domains: DomainFactory) -> list[int]:
    both = await make_domains(
        api_key.account_id,
        ["go.example.com"],
        verified=True,
        index_page=INDEX,
        not_found_page=MISSING,
    )
    bare = await make_domains(api_key.account_id, ["bare.example.com"], verified=True)
    return both + bare


@pytest.fixture
def queries(db: Database) -> Iterator[list[Statement]]:
    engines = {
        id(e): e
        for e in (db.read_engine.sync_engine, db.write_engine.sync_engine, db.point_read_engine())
    }.values()
    with recorded(*engines) as seen:
        yield seen


def of_this_task(seen: list[Statement]) -> list[str]:
    """The statements of the calling test's own requests: httpx's ASGI transport runs the app
    in the test's task. The app's background tasks (the webhook sender's poll, the worker's)
    run statements of their own whenever their timers fire; a statement from a thread cannot
    be told apart, and counts."""
    this = asyncio.current_task()
    return [s.sql for s in seen if s.task is None or s.task is this]


async def test_root_goes_to_the_index_page(client: httpx.AsyncClient, served: list[int]) -> None:
    response = await client.get("/", headers={"Host": "go.example.com"})
    assert response.status_code == 302
    assert response.headers["location"] == INDEX
    assert response.headers["cache-control"] == "no-store"
    assert "x-request-id" in response.headers


@pytest.mark.parametrize("path", ["/anything", "/a/b?c=d", "/apix", "/v10", "/dashboardx"])
async def test_other_paths_go_to_the_not_found_page(
    client: httpx.AsyncClient, served: list[int], path: str
) -> None:
    response = await client.get(path, headers={"Host": "go.example.com"})
    assert response.status_code == 302
    assert response.headers["location"] == MISSING


@pytest.mark.parametrize("host", ["GO.Example.com", "go.example.com:8080", "go.example.com."])
async def test_host_is_normalised(client: httpx.AsyncClient, served: list[int], host: str) -> None:
    response = await client.get("/", headers={"Host": host})
    assert response.status_code == 302
    assert response.headers["location"] == INDEX


@pytest.mark.parametrize("path", ["/", "/x"])
async def test_unset_target_is_a_plain_404_page(
    client: httpx.AsyncClient, served: list[int], path: str
) -> None:
    response = await client.get(path, headers={"Host": "bare.example.com"})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    assert "404" in response.text
    head = await client.head(path, headers={"Host": "bare.example.com"})
    assert head.status_code == 404 and head.content == b""


async def test_other_methods_are_redirected_too(
    client: httpx.AsyncClient, served: list[int]
) -> None:
    response = await client.post("/form", headers={"Host": "go.example.com"})
    assert response.status_code == 302
    assert response.headers["location"] == MISSING


@pytest.mark.parametrize("status", [301, 307, 308])
async def test_status_is_configurable(
    settings: Settings, api_key: IssuedKey, served: list[int], status: int
) -> None:
    app = create_app(settings.model_copy(update={"domain_redirect_status": status}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        response = await client.get("/", headers={"Host": "go.example.com"})
    await app.state.db.dispose()
    assert response.status_code == status
    assert response.headers["location"] == INDEX


async def test_unknown_hosts_reach_the_api(client: httpx.AsyncClient, served: list[int]) -> None:
    healthz = await client.get("/healthz", headers={"Host": "unknown.example.com"})
    assert healthz.status_code == 200
    api = await client.get("/api/v1/domains", headers={"Host": "unknown.example.com"})
    assert api.status_code == 401


@pytest.mark.parametrize(
    "host",
    [
        "atrium.example.org",
        "ATRIUM.example.org:443",
        "127.0.0.1:8000",
        "[::1]:8000",
        "localhost:8000",
        "10.1.2.3",
        "testserver",
    ],
)
async def test_service_and_ip_hosts_cost_no_query(
    client: httpx.AsyncClient, served: list[int], queries: list[Statement], host: str
) -> None:
    response = await client.get("/no-such-page", headers={"Host": host})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert of_this_task(queries) == []


async def test_a_domain_host_costs_one_indexed_lookup(
    client: httpx.AsyncClient, served: list[int], queries: list[Statement]
) -> None:
    await client.get("/no-such-page", headers={"Host": "unknown.example.com"})
    selects = [sql for sql in of_this_task(queries) if sql.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 1
    assert "domains.name =" in selects[0]


async def test_changes_apply_at_once_across_app_instances(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    api_key: IssuedKey,
    served: list[int],
) -> None:
    """Another process (here another app on the same database) changes the domain: no cache."""
    other = create_app(settings)
    transport = httpx.ASGITransport(app=other)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as admin:
        url = f"/api/v1/domains/{served[0]}"
        changed = await admin.patch(
            url, data={"index_page": "https://new.example.org/"}, headers=bearer(api_key.key)
        )
        assert changed.status_code == 200
        moved = await client.get("/", headers={"Host": "go.example.com"})
        assert moved.headers["location"] == "https://new.example.org/"
        assert (await admin.delete(url, headers=bearer(api_key.key))).status_code == 200
    await other.state.db.dispose()
    gone = await client.get("/", headers={"Host": "go.example.com"})
    assert gone.status_code == 404
    assert gone.headers["content-type"] == "application/json"  # the API's own 404 now
