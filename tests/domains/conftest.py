"""Fixtures for the domains tests: a generous rate limit, and domains built through the service."""

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
    themselves are tested through DNS in `tests/serving/test_verification.py`)."""

    async def factory(
        account_id: int, names: Iterable[str], *, verified: bool = False, **pages: str
    ) -> list[int]:
        async with db.transaction() as session:
            ids = []
            for name in names:
                domain = await service.create_domain(
                    session,
                    account_id=account_id,
                    fields={"name": name, **pages},
                    service_host=None,
                )
                if verified:
                    domain.verified_at = utcnow()
                ids.append(domain.id)
            return ids

    return factory
