"""`/api/v1/domains`: phpShort's domains API (form bodies in, phpShort's JSON out)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, status
from pydantic import BaseModel

from atrium.domains import service
from atrium.domains.schemas import (
    DomainDeleted,
    DomainEnvelope,
    DomainForm,
    DomainOut,
    DomainPage,
    DomainUpdateForm,
)
from atrium.errors import NotFound
from atrium.http.deps import (
    CurrentPrincipal,
    DatabaseDep,
    ResolverDep,
    SessionDep,
    SettingsDep,
)
from atrium.kit.form_body import FormFields
from atrium.kit.listing import ListQuery, RecordId, record_id
from atrium.kit.pagination import laravel_page

router = APIRouter(prefix="/domains", tags=["domains"])


def _body(form: type[BaseModel]) -> dict[str, Any]:
    """The request body as the OpenAPI document shows it: the same fields in every media type."""
    schema = form.model_json_schema()
    media_types = ("application/x-www-form-urlencoded", "multipart/form-data", "application/json")
    return {"requestBody": {"content": {media: {"schema": schema} for media in media_types}}}


_BODY = _body(DomainForm)
_UPDATE_BODY = _body(DomainUpdateForm)


def _id(raw: str) -> int:
    value = record_id(raw)
    if value is None:
        raise NotFound(f"no domain with id {raw}")
    return value


@router.get("")
async def list_domains(
    request: Request,
    params: ListQuery,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> DomainPage:
    """List the account's domains: search by name, sort by id (date created) or name, paginate."""
    domains, total = await service.list_domains(
        session, account_id=principal.account_id, params=params
    )
    data = [DomainOut.of(domain, scheme=settings.domain_url_scheme) for domain in domains]
    path = settings.public_url.rstrip("/") + request.url.path
    return DomainPage.model_validate(laravel_page(data, total=total, params=params, path=path))


@router.get("/{id}")
async def show_domain(
    id: RecordId, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> DomainEnvelope:
    """One domain of the account."""
    domain = await service.get_domain(session, account_id=principal.account_id, domain_id=_id(id))
    return DomainEnvelope(data=DomainOut.of(domain, scheme=settings.domain_url_scheme), status=200)


@router.post("", status_code=status.HTTP_201_CREATED, openapi_extra=_BODY)
async def store_domain(
    fields: FormFields, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> DomainEnvelope:
    """Create a domain: `name` (required), `index_page`, `not_found_page`."""
    domain = await service.create_domain(
        session,
        account_id=principal.account_id,
        fields=fields,
        service_host=service.service_host(settings.public_url),
    )
    return DomainEnvelope(data=DomainOut.of(domain, scheme=settings.domain_url_scheme), status=201)


@router.post("/{id}/verify")
async def verify_domain(
    id: RecordId,
    db: DatabaseDep,
    resolver: ResolverDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> DomainEnvelope:
    """Check DNS for proof of control (the TXT token, or the name pointing at this deployment);
    `verified` in the answer says whether the domain is now served."""
    domain = await service.verify_domain(
        db,
        resolver=resolver,
        account_id=principal.account_id,
        domain_id=_id(id),
        targets=settings.domain_verify_target,
    )
    return DomainEnvelope(data=DomainOut.of(domain, scheme=settings.domain_url_scheme), status=200)


@router.put("/{id}", openapi_extra=_UPDATE_BODY)
@router.patch("/{id}", openapi_extra=_UPDATE_BODY)
async def update_domain(
    id: RecordId,
    fields: FormFields,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> DomainEnvelope:
    """Update `index_page` and/or `not_found_page` (an empty value clears; `name` is refused)."""
    domain = await service.update_domain(
        session, account_id=principal.account_id, domain_id=_id(id), fields=fields
    )
    return DomainEnvelope(data=DomainOut.of(domain, scheme=settings.domain_url_scheme), status=200)


@router.delete("/{id}")
async def delete_domain(
    id: RecordId, session: SessionDep, principal: CurrentPrincipal
) -> DomainDeleted:
    """Delete a domain of the account."""
    deleted = await service.delete_domain(
        session, account_id=principal.account_id, domain_id=_id(id)
    )
    return DomainDeleted(id=deleted)
