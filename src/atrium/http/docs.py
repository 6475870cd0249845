"""`/docs`: Swagger UI served from the installed package, never from a CDN.

FastAPI's own `/docs` page loads Swagger UI's script and stylesheet from a CDN and its icon from
FastAPI's site: it stays blank without Internet access, and it runs a third party's script on
the dashboard's origin, where the API keys are typed. Here the files come from
`swagger-ui-bundle-v2` (the Swagger UI distribution on PyPI, pinned), and a
Content-Security-Policy keeps the page to its own origin: its one inline script (the
configuration FastAPI writes) is allowed by its hash, nothing else inline
(docs/decisions/0029-swagger-ui-from-the-package.md).
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from starlette.responses import FileResponse, HTMLResponse, Response
from swagger_ui_bundle import swagger_ui_path

from atrium.errors import NotFound

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
# Only what the page loads: the bundle's other files include a demo page whose configuration
# fetches a document from a third-party site.
ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon-32x32.png": "image/png",
}
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _script_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def _content_security_policy(inline_scripts: list[str]) -> str:
    hashes = " ".join(_script_hash(script) for script in inline_scripts)
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src 'self' {hashes}".rstrip(),
            # Swagger UI's stylesheet draws its icons as data: URLs.
            "img-src 'self' data:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


async def _docs_page(request: Request) -> HTMLResponse:
    root_path = request.scope.get("root_path", "").rstrip("/")
    assets = root_path + ASSETS_PATH
    page = get_swagger_ui_html(
        openapi_url=root_path + (request.app.openapi_url or "/openapi.json"),
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url=f"{assets}/swagger-ui-bundle.js",
        swagger_css_url=f"{assets}/swagger-ui.css",
        swagger_favicon_url=f"{assets}/favicon-32x32.png",
        oauth2_redirect_url=None,
    )
    inline = _INLINE_SCRIPT.findall(bytes(page.body).decode())
    page.headers.update(_SECURITY_HEADERS)
    page.headers["Content-Security-Policy"] = _content_security_policy(inline)
    page.headers["Cache-Control"] = "no-cache"
    return page


async def _asset(name: str) -> Response:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise NotFound(f"no such asset: {name}")
    # Revalidated on every load (the ETag makes that cheap), so an upgrade is seen at once.
    headers = {**_SECURITY_HEADERS, "Cache-Control": "no-cache"}
    return FileResponse(swagger_ui_path / name, media_type=media_type, headers=headers)


def install(app: FastAPI) -> None:
    """Serve `/docs` and its assets (create the app with `docs_url=None`)."""
    app.add_api_route(DOCS_PATH, _docs_page, methods=["GET", "HEAD"], include_in_schema=False)
    app.add_api_route(
        f"{ASSETS_PATH}/{{name}}", _asset, methods=["GET", "HEAD"], include_in_schema=False
    )
