"""`/metrics` label values come from a fixed set: random paths and methods add no series.

With a mounted app's paths as route labels, 2,000 requests to `/dashboard/x/<random>` grew
`/metrics` from 82 KB to 11.4 MB (docs/decisions/0020-metrics-labels-from-route-templates.md).
"""

from __future__ import annotations

import re
import secrets

import httpx

from atrium.http.context import OTHER_METHOD, UNMATCHED


def _random_requests(count: int) -> list[tuple[str, str]]:
    """`count` requests with random paths in every shape that reaches a different part of the
    app: the dashboard's files, the docs, unknown paths, group paths without a key, ids."""
    shapes = (
        "/dashboard/x/{r}",
        "/dashboard/{r}/{r}.js",
        "/docs/{r}",
        "/{r}",
        "/{r}/{r}/{r}",
        "/api/v1/{r}/{r}",
        "/v1/agents/{r}",
        "/metrics/{r}",
    )
    methods = ("GET", "POST", "DELETE", "PROPFIND", "BREW")
    return [
        (methods[i % len(methods)], shapes[i % len(shapes)].format(r=secrets.token_hex(6)))
        for i in range(count)
    ]


def _series(body: str) -> set[str]:
    return {line.split(" ")[0] for line in body.splitlines() if line and line[0] != "#"}


async def test_random_paths_and_methods_add_no_metric_series(client: httpx.AsyncClient) -> None:
    for method, path in _random_requests(80):  # every label combination once
        await client.request(method, path)
    await client.get("/metrics")  # a scrape is counted once it has answered
    before = (await client.get("/metrics")).text
    for method, path in _random_requests(3_000):
        await client.request(method, path)
    after = (await client.get("/metrics")).text
    # Only the counts' digits change: 82 KB grew to 11.4 MB over 2,000 paths before the fix.
    assert _series(after) - _series(before) == set()
    assert len(after) - len(before) < 1_000, (len(before), len(after))
    routes = set(re.findall(r'route="([^"]*)"', after))
    assert {UNMATCHED, "/dashboard"} <= routes
    assert all(not re.search(r"[0-9a-f]{12}", route) for route in routes), routes
    methods = set(re.findall(r'method="([^"]*)"', after))
    assert methods <= {"GET", "POST", "DELETE", OTHER_METHOD}, methods


async def test_routes_and_mounts_are_labelled_by_template(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    await client.get("/v1/agents/agt_doesnotexist", headers=auth)
    await client.get("/dashboard/style.css")
    await client.get("/dashboard/no-such-file.js")
    body = (await client.get("/metrics")).text
    assert 'method="GET",route="/v1/agents/{agent_id}",status="404"' in body
    assert 'method="GET",route="/dashboard",status="200"' in body
    assert 'method="GET",route="/dashboard",status="404"' in body
