"""Images given by URL (`{"type": "image", "url": …}`): held to the outbound rule when the run
is created, and fetched by atrium itself when it executes
(docs/decisions/0064-versions-and-files-gaps.md).

Handing the URL to the model's provider would let something other than atrium's outbound
check fetch it: pydantic-ai downloads it for the providers that take no URLs (its own check,
its own resolver, 50 MiB), and an OpenAI-compatible server on the operator's network fetches
it from inside that network. So the worker fetches it through `outbound_client` (every
connection, redirects included, resolved, checked and pinned to the address checked), bounded
by ATRIUM_FILE_MAX_BYTES, and gives the model the bytes, whose type is sniffed as an upload's
is: an image type on ATRIUM_FILE_ALLOWED_TYPES, whatever the server says.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Final

import httpx

from atrium.files.sniffing import HEAD_BYTES, allowed, sniffed_type
from atrium.outbound.pinned_client import outbound_client
from atrium.outbound.public_targets import TargetRefused, ensure_public, literal_address
from atrium.outbound.resolver import LookupFailed, Resolver
from atrium.settings import Settings

# Connecting (the lookup included) and each read; the whole fetch is bounded by FETCH_SECONDS.
_TIMEOUT: Final = httpx.Timeout(10.0)
FETCH_SECONDS: Final = 30.0


class ImageUnavailable(Exception):
    """An image URL of the run's input could not be given to its model; the message says which
    part and why."""


@dataclass(frozen=True, slots=True)
class FetchedImage:
    url: str
    content_type: str
    data: bytes

    def header(self) -> str:
        return f"Image {self.url} ({self.content_type}, {len(self.data)} bytes):"


async def refuse_private_host(settings: Settings, resolver: Resolver, url: str) -> None:
    """TargetRefused when the URL's host name resolves to an address that is not public (a
    literal or `localhost` was judged by `check_url`). A name that does not resolve now is
    left to the fetch, which looks it up again: DNS may answer differently by then."""
    if settings.allow_private_targets:
        return
    host = httpx.URL(url).host
    if literal_address(host) is not None:
        return
    try:
        addresses = await resolver.addresses(host)
    except LookupFailed:
        return
    ensure_public(host, addresses)


async def fetch_images(settings: Settings, urls: list[str]) -> dict[str, FetchedImage]:
    """Each URL's image, fetched at once; ImageUnavailable naming the first that failed."""
    if not urls:
        return {}
    async with outbound_client(settings, timeout=_TIMEOUT, follow_redirects=True) as client:
        fetched = await asyncio.gather(*(_fetch(settings, client, url) for url in set(urls)))
    return {image.url: image for image in fetched}


async def _fetch(settings: Settings, client: httpx.AsyncClient, url: str) -> FetchedImage:
    try:
        async with asyncio.timeout(FETCH_SECONDS):
            data = await _body(client, url, cap=settings.file_max_bytes)
    except _Refused as exc:
        reason = str(exc)
    except TargetRefused as exc:
        reason = str(exc)
    except TimeoutError:
        reason = f"no whole answer within {FETCH_SECONDS:g} s"
    except httpx.HTTPError as exc:
        reason = f"{type(exc).__name__} {exc}".rstrip()
    else:
        content_type = sniffed_type(data[:HEAD_BYTES], filename="", declared=None)
        if content_type.startswith("image/") and allowed(content_type, settings.file_allowed_types):
            return FetchedImage(url, content_type, data)
        reason = f"its bytes are {content_type}, not an allowed image type"
    raise ImageUnavailable(f"image URL {url}: {reason}")


class _Refused(Exception):
    pass


async def _body(client: httpx.AsyncClient, url: str, *, cap: int) -> bytes:
    """The answer's body as sent, refused at the first byte over `cap`. Nothing is inflated:
    identity encoding is asked for, and a compressed answer is then no image."""
    headers = {"Accept": "image/*", "Accept-Encoding": "identity"}
    async with client.stream("GET", url, headers=headers) as response:
        if response.status_code != 200:
            raise _Refused(f"answered HTTP {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise _Refused(f"{declared} bytes, over the {cap} a file may have")
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > cap:
                raise _Refused(f"over the {cap} bytes a file may have")
    if not body:
        raise _Refused("the answer is empty")
    return bytes(body)
