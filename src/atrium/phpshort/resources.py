"""phpShort's wire scaffolding, shared by the groups that speak it (domains, spaces;
docs/design.md#domains).

- `Envelope[Out]`: show, store, update: `{"data": {...}, "status": 200}`. phpShort's resources
  always say 200 in the body, the store's HTTP 201 included.
- `Page[Out]`: a list, Laravel's length-aware paginator (`pagination.laravel_page`), for
  a `ListRequest` (the dependency `ListRequestDep`: parameters and the list's public URL).
- `Deleted`: `{"id", "object", "deleted": true, "status": 200}`; a group narrows `object`.
- `path_id`: a dependency for the `{id}` of a path; `RecordNotFound`: the 404 of a record that
  the account does not hold, which each group names (`DomainNotFound`).
- `documented_body`: the request body as the OpenAPI document shows it (form or JSON alike).

A group subclasses the models under its own names (`class DomainEnvelope(Envelope[DomainOut])`),
so the OpenAPI document keeps one readable schema name per shape.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel, Field

from atrium.errors import NotFound
from atrium.kit.wire_schemas import ALWAYS_SENT
from atrium.phpshort.listing import ListParams, ListQuery, RecordId, record_id
from atrium.phpshort.pagination import PageLinks, PageMeta, laravel_page
from atrium.settings import Settings

Out = TypeVar("Out", bound=BaseModel)
PageT = TypeVar("PageT", bound="Page[Any]")

PHPSHORT_STATUS = 200
_STATUS_DESCRIPTION = "Always 200, as phpShort's resources say (a store's HTTP status is 201)."
_BODY_MEDIA_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")


@dataclass(frozen=True, slots=True)
class ListRequest:
    """A list call: its validated parameters and the URL its paginator's links point at."""

    params: ListParams
    url: str  # the service's public URL + the list's path, no query


async def list_request(request: Request, params: ListQuery) -> ListRequest:
    """Dependency: the list's parameters (400 naming a bad one) and its public URL."""
    settings: Settings = request.app.state.settings
    return ListRequest(params=params, url=settings.public_url.rstrip("/") + request.url.path)


ListRequestDep = Annotated[ListRequest, Depends(list_request)]


class Envelope(BaseModel, Generic[Out]):
    model_config = ALWAYS_SENT

    data: Out
    status: int = Field(PHPSHORT_STATUS, description=_STATUS_DESCRIPTION)


class Page(BaseModel, Generic[Out]):
    """A Laravel paginator page."""

    model_config = ALWAYS_SENT

    data: list[Out]
    links: PageLinks
    meta: PageMeta
    status: int = Field(PHPSHORT_STATUS, description=_STATUS_DESCRIPTION)

    @classmethod
    def of(cls: type[PageT], data: Sequence[Out], *, total: int, listing: ListRequest) -> PageT:
        """One page of `data` (already presented) out of `total` records."""
        body = laravel_page(data, total=total, params=listing.params, path=listing.url)
        return cls.model_validate(body)


class Deleted(BaseModel):
    model_config = ALWAYS_SENT

    id: int
    object: str  # narrowed to the group's literal ("domain", "space") by each subclass
    deleted: bool = True
    status: int = PHPSHORT_STATUS


class RecordNotFound(NotFound):
    """No such record in the account (another account's is as unknown as a missing one). Like
    every group's 404 for a path parameter, it names the parameter: here always `id`. A group
    subclasses it with its `noun`."""

    noun = "record"

    def __init__(self, record: int | str) -> None:
        super().__init__(f"no {self.noun} with id {record}", details={"parameter": "id"})


def path_id(missing: type[RecordNotFound]) -> Callable[[str], Awaitable[int]]:
    """A dependency for the `{id}` of a path: 400 on `id` when not an integer, 404 (`missing`)
    when no record can have it. `Annotated[int, Depends(path_id(DomainNotFound))]`."""

    async def record(id: RecordId) -> int:  # the path parameter's name; async: no thread hop
        value = record_id(id)
        if value is None:
            raise missing(id)
        return value

    return record


def documented_body(form: type[BaseModel]) -> dict[str, Any]:
    """`openapi_extra` for a body parsed by `form_body`: the same fields in every media type."""
    schema = form.model_json_schema()
    return {"requestBody": {"content": {media: {"schema": schema} for media in _BODY_MEDIA_TYPES}}}
