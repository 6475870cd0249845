"""Laravel's length-aware paginator, as phpShort's API returns it.

`{"data", "links": {first, last, prev, next}, "meta": {current_page, from, last_page, links,
path, per_page, to, total}, "status": 200}`. `meta.links` follows Laravel's `UrlWindow` with
`onEachSide = 3`: every page when there are fewer than 14, otherwise the first pages, "...", a
window around the current page, "...", the last pages. Page URLs repeat the effective query and
put `page` last, percent-encoded like PHP's `http_build_query(..., PHP_QUERY_RFC3986)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil
from typing import Any
from urllib.parse import quote, urlencode

from pydantic import BaseModel, Field

from atrium.phpshort.listing import ListParams

ON_EACH_SIDE = 3
PREVIOUS_LABEL = "&laquo; Previous"
NEXT_LABEL = "Next &raquo;"


class PageLinks(BaseModel):
    first: str
    last: str
    prev: str | None
    next: str | None


class MetaLink(BaseModel):
    url: str | None
    label: str
    active: bool


class PageMeta(BaseModel):
    current_page: int
    from_: int | None = Field(alias="from")
    last_page: int
    links: list[MetaLink]
    path: str
    per_page: int
    to: int | None
    total: int


def last_page(total: int, per_page: int) -> int:
    return max(ceil(total / per_page), 1)


class _Urls:
    def __init__(self, path: str, params: ListParams) -> None:
        self.path = path
        self.query = params.query()

    def __call__(self, page: int) -> str:
        return f"{self.path}?{urlencode([*self.query, ('page', str(page))], quote_via=quote)}"


def _window(current: int, last: int) -> list[list[int] | None]:
    """Laravel's `UrlWindow`: runs of page numbers, `None` for a "..." gap."""
    if last < ON_EACH_SIDE * 2 + 8:
        return [list(range(1, last + 1))]
    window = ON_EACH_SIDE + 4
    start, finish = [1, 2], [last - 1, last]
    if current <= window:
        return [list(range(1, window + ON_EACH_SIDE + 1)), None, finish]
    if current > last - window:
        return [start, None, list(range(last - (window + ON_EACH_SIDE - 1), last + 1))]
    slider = list(range(current - ON_EACH_SIDE, current + ON_EACH_SIDE + 1))
    return [start, None, slider, None, finish]


def laravel_page(
    data: Sequence[Any], *, total: int, params: ListParams, path: str
) -> dict[str, Any]:
    """The paginator body for one page of `data` (already serialised) out of `total` records."""
    current, per_page = params.page, params.per_page
    last = last_page(total, per_page)
    url = _Urls(path, params)
    prev_url = url(current - 1) if current > 1 else None
    next_url = url(current + 1) if last > current else None
    first_item = (current - 1) * per_page + 1 if data else None
    meta_links: list[dict[str, Any]] = [{"url": prev_url, "label": PREVIOUS_LABEL, "active": False}]
    for run in _window(current, last):
        if run is None:
            meta_links.append({"url": None, "label": "...", "active": False})
            continue
        meta_links.extend(
            {"url": url(number), "label": str(number), "active": number == current}
            for number in run
        )
    meta_links.append({"url": next_url, "label": NEXT_LABEL, "active": False})
    return {
        "data": list(data),
        "links": {"first": url(1), "last": url(last), "prev": prev_url, "next": next_url},
        "meta": {
            "current_page": current,
            "from": first_item,
            "last_page": last,
            "links": meta_links,
            "path": path,
            "per_page": per_page,
            "to": None if first_item is None else first_item + len(data) - 1,
            "total": total,
        },
        "status": 200,
    }
