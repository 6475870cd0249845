"""SQL for domains: lookups, writes, and list pages that stay fast at a million rows per account.

A list page is found in two steps, ids first (from a covering index), then the rows: an offset
deep into the list walks index entries only. Totals come from `domain_counts` (kept by triggers)
when there is no search. With a search, the matching candidates come first: from a scan of the
account's own rows when it holds at most `scan_max_rows` domains (so no other account's data
changes the time), otherwise from the substring index (see `domains.search`). When there are
few, they are ordered and counted in memory; when there are many, the account's own index is
scanned instead, which is then the cheaper plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, Connection, Select, bindparam, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import flag_modified

from atrium.db.models import Domain, DomainCount
from atrium.domains import search
from atrium.domains.verification import VerificationError
from atrium.phpshort.listing import ListParams

# Searches with at most this many candidates are ordered in memory rather than by an index scan.
CANDIDATE_CAP = 2000


async def get(session: AsyncSession, *, account_id: int, domain_id: int) -> Domain | None:
    return await session.scalar(
        select(Domain).where(Domain.id == domain_id, Domain.account_id == account_id)
    )


async def name_exists(session: AsyncSession, name: str) -> bool:
    return (await session.scalar(select(Domain.id).where(Domain.name == name))) is not None


def record_check(domain: Domain, *, error: VerificationError | None, at: datetime) -> None:
    """Keep a verification check's result on the (unverified) domain: verified at `at` when
    `error` is None. A failed check leaves `updated_at` as it was: it says when the domain's
    fields changed, and a check that found nothing changed none of them."""
    domain.verification_error = error
    domain.verification_checked_at = at
    if error is None:
        domain.verified_at = at
    else:
        flag_modified(domain, "updated_at")  # written as it is, so `onupdate` does not fire


# Built once: the lookup runs on every request whose Host could be a domain.
_PAGES_FOR_HOST = select(Domain.index_page, Domain.not_found_page).where(
    Domain.name == bindparam("host"), Domain.verified_at.is_not(None)
)


def pages_for_host(connection: Connection, *, host: str) -> tuple[str | None, str | None] | None:
    """`(index_page, not_found_page)` of the verified domain named `host`, None if there is
    none (an unverified domain is stored, not served). Synchronous (`Database.point_read`: the
    unique index on the name finds at most one row)."""
    row = connection.execute(_PAGES_FOR_HOST, {"host": host}).first()
    return None if row is None else (row[0], row[1])


async def account_total(session: AsyncSession, account_id: int) -> int:
    total = await session.scalar(
        select(DomainCount.total).where(DomainCount.account_id == account_id)
    )
    return int(total or 0)


def _ordered(query: Select[int], params: ListParams) -> Select[int]:
    keys = [Domain.name, Domain.id] if params.sort_by == "name" else [Domain.id]
    return query.order_by(*(key.desc() if params.descending else key.asc() for key in keys))


async def _rows(session: AsyncSession, ids: Sequence[int]) -> list[Domain]:
    if not ids:
        return []
    found = {row.id: row for row in await session.scalars(select(Domain).where(Domain.id.in_(ids)))}
    return [found[i] for i in ids if i in found]


async def _scan_page(
    session: AsyncSession, params: ListParams, where: Sequence[ColumnElement[bool]]
) -> list[Domain]:
    query = _ordered(select(Domain.id).where(*where), params)
    ids = (await session.scalars(query.limit(params.per_page).offset(params.offset))).all()
    return await _rows(session, ids)


async def list_page(
    session: AsyncSession, *, account_id: int, params: ListParams, scan_max_rows: int
) -> tuple[list[Domain], int]:
    """One page of the account's domains and the total number matching `params`."""
    owned = Domain.account_id == account_id
    account_size = await account_total(session, account_id)
    if params.search is None:
        if params.offset >= account_size:
            return [], account_size
        return await _scan_page(session, params, [owned]), account_size

    term = search.normalize_term(params.search)
    if term is None or account_size == 0:
        return [], 0
    own_rows_only = account_size <= scan_max_rows
    find = search.own_candidates if own_rows_only else search.candidates
    candidates = await find(session, account_id=account_id, term=term, cap=CANDIDATE_CAP)
    if candidates is not None:
        return await _page_of_candidates(session, candidates, params), len(candidates)

    where = [owned, search.predicate(session, term, indexed=not own_rows_only)]
    total = int(await session.scalar(select(func.count()).select_from(Domain).where(*where)) or 0)
    if params.offset >= total:
        return [], total
    return await _scan_page(session, params, where), total


async def _page_of_candidates(
    session: AsyncSession, candidates: list[tuple[int, str]], params: ListParams
) -> list[Domain]:
    # Names are ASCII and both databases compare them bytewise, as Python does.
    if params.sort_by == "name":
        candidates.sort(key=lambda row: (row[1], row[0]), reverse=params.descending)
    else:
        candidates.sort(key=lambda row: row[0], reverse=params.descending)
    window = candidates[params.offset : params.offset + params.per_page]
    return await _rows(session, [domain_id for domain_id, _ in window])
