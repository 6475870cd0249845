"""`/api/v1/spaces`: phpShort's spaces API (form bodies in, phpShort's JSON out)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from pydantic import BaseModel

from atrium.errors import NotFound
from atrium.http.deps import CurrentPrincipal, SessionDep, SettingsDep
from atrium.kit.form_body import FormFields
from atrium.kit.listing import ListQuery, RecordId, record_id
from atrium.kit.pagination import laravel_page
from atrium.spaces import service
from atrium.spaces.schemas import (
    SpaceDeleted,
    SpaceEnvelope,
    SpaceForm,
    SpaceOut,
    SpacePage,
    SpaceUpdateForm,
)

router = APIRouter(prefix="/spaces", tags=["spaces"])


def _body(form: type[BaseModel]) -> dict[str, Any]:
    """The request body as the OpenAPI document shows it: the same fields in every media type."""
    schema = form.model_json_schema()
    media_types = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")
    return {"requestBody": {"content": {media: {"schema": schema} for media in media_types}}}


_BODY = _body(SpaceForm)
_UPDATE_BODY = _body(SpaceUpdateForm)


def _id(raw: str) -> int:
    value = record_id(raw)
    if value is None:
        raise NotFound(f"no space with id {raw}")
    return value


@router.get("")
async def list_spaces(
    request: Request,
    params: ListQuery,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> SpacePage:
    """List the account's spaces: search by name, sort by id or name, paginate."""
    spaces, total = await service.list_spaces(
        session, account_id=principal.account_id, params=params
    )
    path = settings.public_url.rstrip("/") + request.url.path
    data = [SpaceOut.of(space) for space in spaces]
    return SpacePage.model_validate(laravel_page(data, total=total, params=params, path=path))


@router.get("/{id}")
async def show_space(
    id: RecordId, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """One space of the account."""
    space = await service.get_space(session, account_id=principal.account_id, space_id=_id(id))
    return SpaceEnvelope(data=SpaceOut.of(space), status=200)


@router.post("", status_code=status.HTTP_201_CREATED, openapi_extra=_BODY)
async def store_space(
    fields: FormFields, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """Create a space: `name` (required, 1-32 characters), `color` (1-6, default 1)."""
    space = await service.create_space(session, account_id=principal.account_id, fields=fields)
    return SpaceEnvelope(data=SpaceOut.of(space), status=201)


@router.put("/{id}", openapi_extra=_UPDATE_BODY)
@router.patch("/{id}", openapi_extra=_UPDATE_BODY)
async def update_space(
    id: RecordId, fields: FormFields, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """Update `name` and/or `color`; absent fields are kept."""
    space = await service.update_space(
        session, account_id=principal.account_id, space_id=_id(id), fields=fields
    )
    return SpaceEnvelope(data=SpaceOut.of(space), status=200)


@router.delete("/{id}")
async def delete_space(
    id: RecordId, session: SessionDep, principal: CurrentPrincipal
) -> SpaceDeleted:
    """Delete a space of the account."""
    deleted = await service.delete_space(session, account_id=principal.account_id, space_id=_id(id))
    return SpaceDeleted(id=deleted)
