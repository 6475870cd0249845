"""Rules for domains: who owns what, name normalisation and uniqueness, page URLs, lists,
verification."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.engine import Database
from atrium.db.models import Domain
from atrium.domains import repository, verification
from atrium.domains.errors import DomainNameTaken, DomainNotFound
from atrium.domains.rules import normalize_name, normalize_page_url
from atrium.errors import InvalidParameter
from atrium.kit.time import utcnow
from atrium.outbound.resolver import Resolver
from atrium.phpshort.form_body import Fields, text_field
from atrium.phpshort.listing import ListParams

_PAGES = ("index_page", "not_found_page")


async def get_domain(session: AsyncSession, *, account_id: int, domain_id: int) -> Domain:
    """The account's domain; another account's id is as unknown as a missing one."""
    domain = await repository.get(session, account_id=account_id, domain_id=domain_id)
    if domain is None:
        raise DomainNotFound(domain_id)
    return domain


def new_domain(account_id: int, fields: Fields, *, service_host: str | None) -> Domain:
    """The domain `fields` describe, every field validated, not yet stored."""
    raw_name = text_field(fields, "name")
    if raw_name is None or not raw_name:
        raise InvalidParameter("name", "name is required")
    name = normalize_name(raw_name)
    if service_host is not None and name == service_host:
        raise InvalidParameter("name", "name is the service's own host")
    pages = {page: normalize_page_url(page, text_field(fields, page)) for page in _PAGES}
    now = utcnow()  # one instant for both stamps, as Laravel does
    return Domain(account_id=account_id, name=name, created_at=now, updated_at=now, **pages)


async def create_domain(
    session: AsyncSession, *, account_id: int, fields: Fields, service_host: str | None
) -> Domain:
    """Validate every field before writing anything; the name is unique in the deployment."""
    domain = new_domain(account_id, fields, service_host=service_host)
    if await repository.name_exists(session, domain.name):
        raise DomainNameTaken()
    session.add(domain)
    try:
        await session.flush()
    except IntegrityError as exc:  # a concurrent store of the same name won the race
        raise DomainNameTaken() from exc
    return domain


async def update_domain(
    session: AsyncSession, *, account_id: int, domain_id: int, fields: Fields
) -> Domain:
    """PUT and PATCH alike: the pages present are set (empty clears), absent ones are kept."""
    domain = await get_domain(session, account_id=account_id, domain_id=domain_id)
    if "name" in fields:
        raise InvalidParameter("name", "name cannot be updated")
    changes = {
        page: normalize_page_url(page, text_field(fields, page))
        for page in _PAGES
        if page in fields
    }
    for page, value in changes.items():
        setattr(domain, page, value)
    await session.flush()
    return domain


async def delete_domain(session: AsyncSession, *, account_id: int, domain_id: int) -> int:
    domain = await get_domain(session, account_id=account_id, domain_id=domain_id)
    await session.delete(domain)
    await session.flush()
    return domain_id


async def verify_domain(
    db: Database,
    *,
    resolver: Resolver,
    account_id: int,
    domain_id: int,
    targets: Sequence[str],
) -> Domain:
    """Look for the DNS proof of control and keep what the check found: the domain verified
    (for good), or why not and when DNS was asked.

    Takes the database rather than a session: no transaction stays open during the lookups
    (up to `ATRIUM_DNS_TIMEOUT_SECONDS`; on SQLite a write transaction holds the only write
    connection). A verified domain is returned as it is, without a lookup.
    """
    async with db.session(write=False) as session:
        domain = await get_domain(session, account_id=account_id, domain_id=domain_id)
    if domain.verified_at is not None:
        return domain
    outcome = await verification.check(
        resolver, name=domain.name, token=domain.verification_token, targets=targets
    )
    async with db.transaction() as session:
        domain = await get_domain(session, account_id=account_id, domain_id=domain_id)
        # A concurrent check that verified the domain meanwhile stands.
        if domain.verified_at is None:
            repository.record_check(domain, error=outcome.error, at=utcnow())
            await session.flush()
    return domain


async def list_domains(
    session: AsyncSession, *, account_id: int, params: ListParams, scan_max_rows: int
) -> tuple[list[Domain], int]:
    """A page and its total; searches of accounts of up to `scan_max_rows` domains read only the
    account's own rows (`ATRIUM_DOMAIN_SEARCH_SCAN_MAX_ROWS`,
    docs/decisions/0021-domain-search.md)."""
    return await repository.list_page(
        session, account_id=account_id, params=params, scan_max_rows=scan_max_rows
    )


def service_host(public_url: str) -> str | None:
    """The host of the service's own URL: it is never a domain."""
    host = urlsplit(public_url).hostname
    return host.rstrip(".").lower() if host else None
