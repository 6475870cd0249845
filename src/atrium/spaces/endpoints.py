"""`/api/v1/spaces`: phpShort's spaces API (form bodies in, phpShort's JSON out)."""

from __future__ import annotations

from fastapi import APIRouter, status

from atrium.http.deps import CurrentPrincipal, SessionDep
from atrium.http.openapi import error_responses
from atrium.phpshort.form_body import FormFields
from atrium.phpshort.resources import ListRequestDep, documented_body
from atrium.spaces import service
from atrium.spaces.errors import SpaceNameTaken, SpaceNotFound
from atrium.spaces.schemas import (
    SpaceDeleted,
    SpaceEnvelope,
    SpaceForm,
    SpaceId,
    SpaceOut,
    SpacePage,
    SpaceUpdateForm,
)

router = APIRouter(prefix="/spaces", tags=["spaces"])
_NOT_FOUND = error_responses(SpaceNotFound)


@router.get("")
async def list_spaces(
    listing: ListRequestDep, session: SessionDep, principal: CurrentPrincipal
) -> SpacePage:
    """List the account's spaces: search by name, sort by id or name, paginate."""
    spaces, total = await service.list_spaces(
        session, account_id=principal.account_id, params=listing.params
    )
    return SpacePage.of([SpaceOut.of(space) for space in spaces], total=total, listing=listing)


@router.get("/{id}", responses=_NOT_FOUND)
async def show_space(
    id: SpaceId, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """One space of the account."""
    space = await service.get_space(session, account_id=principal.account_id, space_id=id)
    return SpaceEnvelope.of(space)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    openapi_extra=documented_body(SpaceForm),
    responses=error_responses(SpaceNameTaken),
)
async def store_space(
    fields: FormFields, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """Create a space: `name` (required, 1-32 characters), `color` (1-6, default 1). HTTP 201,
    and `"status": 200` in the body, as phpShort answers."""
    space = await service.create_space(session, account_id=principal.account_id, fields=fields)
    return SpaceEnvelope.of(space)


_UPDATE_ERRORS = error_responses(SpaceNotFound, SpaceNameTaken)


@router.put("/{id}", openapi_extra=documented_body(SpaceUpdateForm), responses=_UPDATE_ERRORS)
@router.patch("/{id}", openapi_extra=documented_body(SpaceUpdateForm), responses=_UPDATE_ERRORS)
async def update_space(
    id: SpaceId, fields: FormFields, session: SessionDep, principal: CurrentPrincipal
) -> SpaceEnvelope:
    """Update `name` and/or `color`; absent fields are kept."""
    space = await service.update_space(
        session, account_id=principal.account_id, space_id=id, fields=fields
    )
    return SpaceEnvelope.of(space)


@router.delete("/{id}", responses=_NOT_FOUND)
async def delete_space(
    id: SpaceId, session: SessionDep, principal: CurrentPrincipal
) -> SpaceDeleted:
    """Delete a space of the account."""
    deleted = await service.delete_space(session, account_id=principal.account_id, space_id=id)
    return SpaceDeleted(id=deleted)
