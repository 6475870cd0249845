"""The dashboard's files as the server sends them: no key needed, strict CSP, nothing external."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from atrium.dashboard import STATIC_DIR


async def test_dashboard_redirects_to_its_index(client: httpx.AsyncClient) -> None:
    response = await client.get("/dashboard")
    assert response.status_code == 307
    assert response.headers["location"] == "dashboard/"
    assert "default-src 'self'" in response.headers["content-security-policy"]


async def test_index_is_served_without_a_key_with_a_strict_policy(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/dashboard/")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    policy = response.headers["content-security-policy"]
    assert policy.startswith("default-src 'self'")
    assert "frame-ancestors 'none'" in policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert '<script type="module" src="js/app.js">' in response.text
    assert '<html lang="en">' in response.text


async def test_every_script_is_served_as_javascript(client: httpx.AsyncClient) -> None:
    scripts = sorted((STATIC_DIR / "js").glob("*.js"))
    assert {path.name for path in scripts} >= {"app.js", "api.js", "sse.js", "runs.js"}
    for path in scripts:
        response = await client.get(f"/dashboard/js/{path.name}")
        assert response.status_code == 200, path.name
        assert "javascript" in response.headers["content-type"], path.name
        assert "default-src 'self'" in response.headers["content-security-policy"]


async def test_an_unknown_file_is_a_404_in_the_error_model(client: httpx.AsyncClient) -> None:
    response = await client.get("/dashboard/nope.js")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


async def test_the_api_still_refuses_requests_without_a_key(client: httpx.AsyncClient) -> None:
    # The dashboard is outside the groups; mounting it must not open the API.
    assert (await client.get("/v1/agents")).status_code == 401


def _sources() -> list[Path]:
    return [path for path in STATIC_DIR.rglob("*") if path.is_file()]


def test_nothing_is_loaded_from_another_origin() -> None:
    """Works offline: no CDN, no web font, no absolute URL in any file."""
    remote = re.compile(r"""(?:src|href|import|from|url)\s*[=(]?\s*["'(]?\s*(?:https?:)?//""")
    for path in _sources():
        text = path.read_text()
        assert not remote.search(text), path.name
        # Only the SVG namespace (an identifier, never fetched) and placeholder text may look
        # like URLs.
        allowed = {"http://www.w3.org/2000/svg", "https://example.com/"}
        assert set(re.findall(r"https?://[^\s\"'`]+", text)) <= allowed, path.name


def test_no_inline_script_or_style_that_the_policy_would_block() -> None:
    for path in STATIC_DIR.rglob("*.html"):
        html = path.read_text()
        assert re.findall(r"<script(?![^>]*\bsrc=)", html) == [], path.name
        assert "<style" not in html and " style=" not in html, path.name
        assert not re.search(r"\son[a-z]+=", html), path.name
