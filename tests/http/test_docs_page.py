"""`/docs` loads Swagger UI from atrium itself: same-origin URLs only, the assets served here.

FastAPI's page loads its script and stylesheet from a CDN: blank offline, and a third party's
script on the dashboard's origin (docs/decisions/0029-swagger-ui-from-the-package.md).
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import httpx
import pytest
from fastapi import FastAPI

EXPECTED_TYPES = {
    "script": ("text/javascript", "application/javascript"),
    "stylesheet": ("text/css",),
    "icon": ("image/png",),
}


class _References(HTMLParser):
    """Every URL the page loads: (kind, url) of scripts, stylesheets and icons; inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []
        self.inline: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            if found.get("src"):
                self.urls.append(("script", found["src"] or ""))
            else:
                self._in_inline_script = True
                self.inline.append("")
        elif tag == "link":
            rel = found.get("rel") or ""
            kind = "stylesheet" if "stylesheet" in rel else "icon"
            self.urls.append((kind, found.get("href") or ""))
        elif any(name in found for name in ("src", "href")):
            self.urls.append((tag, found.get("src") or found.get("href") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_inline_script = False

    def handle_data(self, data: str) -> None:
        if self._in_inline_script:
            self.inline[-1] += data


def _same_origin(url: str, base: str) -> bool:
    if url.startswith("//"):
        return False
    return not re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith(base + "/")


def _parse(page: str) -> _References:
    references = _References()
    references.feed(page)
    return references


async def test_docs_loads_only_same_origin_assets_that_are_served_here(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    page = response.text
    references = _parse(page)
    kinds = {kind for kind, _ in references.urls}
    assert kinds == {"script", "stylesheet", "icon"}, references.urls
    for kind, url in references.urls:
        assert _same_origin(url, "http://testserver"), url
        asset = await client.get(url)
        assert asset.status_code == 200, (url, asset.status_code)
        assert asset.headers["content-type"].startswith(EXPECTED_TYPES[kind]), (url, asset.headers)
        assert len(asset.content) > 100, url
    # No other origin anywhere on the page: the openapi URL in the inline configuration too.
    assert re.findall(r"(?:https?:)?//[^\s'\"<]+", page) == []
    assert "url: '/openapi.json'" in page


async def test_docs_content_security_policy_allows_only_its_own_script(
    client: httpx.AsyncClient,
) -> None:
    response = await client.get("/docs")
    policy = response.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    [inline] = _parse(response.text).inline
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert directives["script-src"] == f"'self' 'sha256-{digest}'"
    assert directives["frame-ancestors"] == "'none'"
    assert response.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/docs/assets/index.html",  # the bundle's demo page fetches a third-party document
        "/docs/assets/swagger-initializer.js",
        "/docs/assets/..%2F..%2F__init__.py",
        "/docs/assets/",
        "/redoc",  # FastAPI's ReDoc page loads its script from a CDN: not served
        "/docs/oauth2-redirect",
    ],
)
async def test_only_the_assets_the_page_uses_are_served(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)
    assert response.status_code == 404, (path, response.status_code)
    assert response.json()["error"]["code"] == "NOT_FOUND"


async def test_docs_behind_a_path_prefix_stay_on_that_prefix(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app, root_path="/atrium")
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        page = (await client.get("/docs")).text
    references = _parse(page)
    assert all(url.startswith("/atrium/docs/assets/") for _, url in references.urls)
    assert "url: '/atrium/openapi.json'" in page
