"""`/api/v1/domains`: phpShort's domains API (form bodies in, phpShort's JSON out)."""

from __future__ import annotations

from fastapi import APIRouter, status

from atrium.domains import service
from atrium.domains.errors import DomainNameTaken, DomainNotFound
from atrium.domains.schemas import (
    DomainDeleted,
    DomainEnvelope,
    DomainForm,
    DomainId,
    DomainOut,
    DomainPage,
    DomainUpdateForm,
)
from atrium.http.deps import (
    CurrentPrincipal,
    DatabaseDep,
    ResolverDep,
    SessionDep,
    SettingsDep,
)
from atrium.http.openapi import error_responses
from atrium.phpshort.form_body import FormFields
from atrium.phpshort.resources import ListRequestDep, documented_body

router = APIRouter(prefix="/domains", tags=["domains"])
_NOT_FOUND = error_responses(DomainNotFound)


@router.get("")
async def list_domains(
    listing: ListRequestDep, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> DomainPage:
    """List the account's domains: search by name, sort by id (date created) or name, paginate."""
    domains, total = await service.list_domains(
        session,
        account_id=principal.account_id,
        params=listing.params,
        scan_max_rows=settings.domain_search_scan_max_rows,
    )
    data = [DomainOut.of(domain, scheme=settings.domain_url_scheme) for domain in domains]
    return DomainPage.of(data, total=total, listing=listing)


@router.get("/{id}", responses=_NOT_FOUND)
async def show_domain(
    id: DomainId, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> DomainEnvelope:
    """One domain of the account."""
    domain = await service.get_domain(session, account_id=principal.account_id, domain_id=id)
    return DomainEnvelope.of(domain, scheme=settings.domain_url_scheme)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    openapi_extra=documented_body(DomainForm),
    responses=error_responses(DomainNameTaken),
)
async def store_domain(
    fields: FormFields, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> DomainEnvelope:
    """Create a domain: `name` (required), `index_page`, `not_found_page`. HTTP 201, and
    `"status": 200` in the body, as phpShort answers."""
    domain = await service.create_domain(
        session,
        account_id=principal.account_id,
        fields=fields,
        service_host=service.service_host(settings.public_url),
    )
    return DomainEnvelope.of(domain, scheme=settings.domain_url_scheme)


@router.post("/{id}/verify", responses=_NOT_FOUND)
async def verify_domain(
    id: DomainId,
    db: DatabaseDep,
    resolver: ResolverDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> DomainEnvelope:
    """Check DNS for proof of control (the TXT token, or the name pointing at this deployment);
    `verified` in the answer says whether the domain is now served, `verification.last_error`
    why not, and `verification.checked_at` when DNS was asked."""
    domain = await service.verify_domain(
        db,
        resolver=resolver,
        account_id=principal.account_id,
        domain_id=id,
        targets=settings.domain_verify_target,
    )
    return DomainEnvelope.of(domain, scheme=settings.domain_url_scheme)


@router.put("/{id}", openapi_extra=documented_body(DomainUpdateForm), responses=_NOT_FOUND)
@router.patch("/{id}", openapi_extra=documented_body(DomainUpdateForm), responses=_NOT_FOUND)
async def update_domain(
    id: DomainId,
    fields: FormFields,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> DomainEnvelope:
    """Update `index_page` and/or `not_found_page` (an empty value clears; `name` is refused)."""
    domain = await service.update_domain(
        session, account_id=principal.account_id, domain_id=id, fields=fields
    )
    return DomainEnvelope.of(domain, scheme=settings.domain_url_scheme)


@router.delete("/{id}", responses=_NOT_FOUND)
async def delete_domain(
    id: DomainId, session: SessionDep, principal: CurrentPrincipal
) -> DomainDeleted:
    """Delete a domain of the account: it is no longer served, and its name is free again at
    once, for any account (ids are never reused)."""
    deleted = await service.delete_domain(session, account_id=principal.account_id, domain_id=id)
    return DomainDeleted(id=deleted)
