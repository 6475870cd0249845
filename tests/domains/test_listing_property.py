"""Property: over random data, list + search + sort + pagination returns every match exactly once,
in the requested order, whatever the page size."""

from __future__ import annotations

import secrets

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import KeyFactory, bearer
from tests.domains.conftest import DomainFactory

LABEL = st.text(alphabet="abc0-", min_size=1, max_size=6).filter(
    lambda label: not label.startswith("-") and not label.endswith("-")
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    labels=st.lists(LABEL, max_size=30, unique=True),
    term=st.none() | st.text(alphabet="abc0-.", min_size=1, max_size=4),
    sort_by=st.sampled_from(["id", "name"]),
    sort=st.sampled_from(["asc", "desc"]),
    per_page=st.sampled_from([10, 25]),
)
async def test_every_record_once_in_order(
    client: httpx.AsyncClient,
    make_key: KeyFactory,
    make_domains: DomainFactory,
    labels: list[str],
    term: str | None,
    sort_by: str,
    sort: str,
    per_page: int,
) -> None:
    key = await make_key()  # a fresh account per example keeps examples apart
    suffix = "".join(secrets.choice("xyz") for _ in range(20))  # never a search term
    names = [f"{label}.{suffix}.test" for label in labels]
    ids = await make_domains(key.account_id, names)

    rows = [(i, n) for i, n in zip(ids, names, strict=True) if term is None or term in n]
    if sort_by == "name":
        rows.sort(key=lambda row: (row[1], row[0]), reverse=sort == "desc")
    else:
        rows.sort(key=lambda row: row[0], reverse=sort == "desc")

    params = {"sort_by": sort_by, "sort": sort, "per_page": str(per_page)}
    if term is not None:
        params["search"] = term
    seen: list[tuple[int, str]] = []
    page, last_page = 1, 1
    while page <= last_page:
        response = await client.get(
            "/api/v1/domains", params={**params, "page": str(page)}, headers=bearer(key.key)
        )
        body = response.json()
        assert body["meta"]["total"] == len(rows)
        last_page = body["meta"]["last_page"]
        assert len(body["data"]) <= per_page
        seen += [(d["id"], d["name"]) for d in body["data"]]
        page += 1
    assert last_page == max(1, -(-len(rows) // per_page))
    assert seen == rows
