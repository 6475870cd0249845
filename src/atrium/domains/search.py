"""Case-insensitive substring search on domain names: the account's own rows, or a trigram index.

Names are stored lower-case ASCII (punycode), so the term is lower-cased (and a Unicode term
IDNA-encoded) and then matched exactly.

Two ways to find the candidates (`repository.list_page` picks one by the account's size):
- `own_candidates`: a scan of the account's own rows only (its covering index), so the time
  depends on nothing but the caller's data. Used for accounts of up to
  `ATRIUM_DOMAIN_SEARCH_SCAN_MAX_ROWS` domains: a search must not tell one account whether
  *another* holds names containing a term (the shared index below reads the other accounts'
  hits and takes measurably longer when there are some: docs/decisions/0021-domain-search.md).
- `candidates`: the substring index, for large accounts where a scan would be slow. SQLite: the
  FTS5 trigram table `domains_fts` (a term shorter than three characters has no trigram and is
  scanned). PostgreSQL: `LIKE` over the `pg_trgm` GIN index, chosen (or not) by the planner.
  The index holds every account's names, so its time can depend on other accounts' data.
"""

from __future__ import annotations

import json
import re

import idna
from sqlalchemy import ColumnElement, Integer, column, func, literal_column, select, table
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Domain

_FTS = table("domains_fts", column("rowid", Integer))
_TRIGRAM = 3
_NAME_CHARACTERS = re.compile(r"[a-z0-9.-]+")


def normalize_term(raw: str) -> str | None:
    """The term as stored names spell it; None when no stored name can contain it."""
    term = raw.lower()
    if not term.isascii():
        try:
            term = idna.encode(term, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError):
            return None
    # Stored names hold only these characters: any other term matches nothing, unqueried.
    return term if _NAME_CHARACTERS.fullmatch(term) else None


def _sqlite(session: AsyncSession) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def _like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def predicate(session: AsyncSession, term: str, *, indexed: bool = True) -> ColumnElement[bool]:
    """`name` contains `term`, in the form each database evaluates fastest on a scan.

    `indexed=False` keeps PostgreSQL off the trigram index (which `strpos` can not use), so the
    account's own b-tree index is walked and no other account's entries are read."""
    if _sqlite(session):
        return func.instr(Domain.name, term) > 0
    if not indexed:
        return func.strpos(Domain.name, term) > 0
    return Domain.name.like(_like_pattern(term), escape="\\")


async def own_candidates(
    session: AsyncSession, *, account_id: int, term: str, cap: int
) -> list[tuple[int, str]] | None:
    """`(id, name)` of every matching domain of the account, or None when there are over `cap`,
    found by scanning the account's own rows only (`(account_id, name, id)` covering index)."""
    return await _first_matches(
        session, account_id=account_id, where=predicate(session, term, indexed=False), cap=cap
    )


async def _first_matches(
    session: AsyncSession, *, account_id: int, where: ColumnElement[bool], cap: int
) -> list[tuple[int, str]] | None:
    # The LIMIT ends an unselective term's scan early.
    query = select(Domain.id, Domain.name).where(Domain.account_id == account_id, where)
    rows = [(row[0], row[1]) for row in await session.execute(query.limit(cap + 1))]
    return None if len(rows) > cap else rows


async def candidates(
    session: AsyncSession, *, account_id: int, term: str, cap: int
) -> list[tuple[int, str]] | None:
    """`(id, name)` of every matching domain of the account, or None when there are over `cap`.

    None means the term is not selective: scanning the account's index is then cheaper.
    """
    if _sqlite(session) and len(term) >= _TRIGRAM:
        return await _sqlite_fts_candidates(session, account_id=account_id, term=term, cap=cap)
    # PostgreSQL's planner picks the trigram index or a scan; a term too short for SQLite's
    # trigrams is scanned.
    return await _first_matches(
        session, account_id=account_id, where=predicate(session, term), cap=cap
    )


async def _sqlite_fts_candidates(
    session: AsyncSession, *, account_id: int, term: str, cap: int
) -> list[tuple[int, str]] | None:
    # Probe the index globally first: a phrase of trigrams is an exact substring match, and
    # the LIMIT stops an unselective term after `cap` hits instead of reading every posting.
    phrase = '"' + term.replace('"', '""') + '"'
    match = literal_column("domains_fts").op("MATCH")(phrase)
    hits = (await session.scalars(select(_FTS.c.rowid).where(match).limit(cap + 1))).all()
    if len(hits) > cap:
        return None
    if not hits:
        return []
    # Filtered by account here, not in SQL: given `account_id = ?`, SQLite prefers walking the
    # account's whole index to looking up these few rowids.
    # The ids travel as one JSON parameter: `IN (?, ?, …)` would make a new statement text for
    # every number of hits, and each connection's statement cache would keep up to 128 of them
    # (up to 2,000 parameters each) alive: native memory that grew without end under a soak.
    hit_ids = func.json_each(json.dumps(list(hits))).table_valued("value")
    owners = select(Domain.id, Domain.name, Domain.account_id).where(
        Domain.id.in_(select(hit_ids.c.value))
    )
    return [(row[0], row[1]) for row in await session.execute(owners) if row[2] == account_id]
