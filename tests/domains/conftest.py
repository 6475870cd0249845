"""Fixtures for the domains tests: a generous rate limit, and domains as the service makes them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

import pytest

from atrium.db.engine import Database
from atrium.domains import service
from atrium.kit.time import utcnow

PUBLIC_URL = "https://atrium.example.org"

DomainFactory = Callable[..., Awaitable[list[int]]]


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"rate_limit_standard": "1000000/hour", "public_url": PUBLIC_URL}


@pytest.fixture
def make_domains(db: Database) -> DomainFactory:
    """`await make_domains(account_id, ["a.com", ...])` → their ids, created in one transaction.
    `verified=True` marks them verified, as a successful `POST .../verify` does (the proofs
    themselves are tested through DNS in `tests/serving/test_verification.py`).

    The rows are the service's own (`service.new_domain`), written in one flush:
    `service.create_domain` checks the name is free and flushes per domain, two round trips
    each, and the listing tests seed over 2,000 (~1.3 ms of CPU each). That check is tested
    through the API in `test_endpoints.py`; the unique index still refuses a name taken twice."""

    async def factory(
        account_id: int, names: Iterable[str], *, verified: bool = False, **pages: str
    ) -> list[int]:
        domains = []
        for name in names:
            domain = service.new_domain(account_id, {"name": name, **pages}, service_host=None)
            if verified:
                domain.verified_at = utcnow()
            domains.append(domain)
        async with db.transaction() as session:
            session.add_all(domains)
            await session.flush()
            return [domain.id for domain in domains]

    return factory
